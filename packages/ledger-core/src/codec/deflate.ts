import { deflateRawSync } from "node:zlib";
import { InvalidArgumentError } from "../events/errors.js";
import {
  type CannedCode,
  distanceFrequency,
  literalLengthFrequency,
  MAX_DEFLATE_INPUT_BYTES,
  output,
  prepareCannedCode,
  tokens,
  writeBlock,
  writeCannedBlock,
} from "./deflate-block.js";
import { distanceCode, END_OF_BLOCK, LENGTH_SYMBOL, MAX_MATCH } from "./deflate-symbols.js";

export { MAX_DEFLATE_INPUT_BYTES };

/**
 * A raw DEFLATE (RFC 1951) encoder with a preset dictionary, for inputs of at most 16 KiB:
 * `zlib.inflateRawSync(out, { dictionary })` returns the input, so the SQLite store's event
 * bodies keep the format zlib wrote (body-codec.ts) and readers do not change. Blobs use it
 * too, with no dictionary (store/blob.ts).
 * Why not zlib: Node's `deflateRawSync` creates a stream, runs deflateInit and loads the
 * dictionary on every call, which costs more than compressing a 1 KB body; its sync API
 * cannot keep that state. Here the dictionary's hash chains are built once
 * (`prepareDictionary`) and a call only walks its input.
 * The format: greedy LZ77 over 4-byte hash chains (on ledger bodies the output is within a
 * few percent of zlib's default level), then one final block: dynamic Huffman, fixed Huffman
 * or stored, whichever is smallest. A dictionary prepared with samples also has a dynamic code
 * built from them once, which inputs up to `CANNED_MAX_INPUT_BYTES` use instead of their own
 * (or fixed, or stored, if smaller): building a short input's own three codes cost about a
 * third of its call (the suites' 766-character model event: 10.5-11.2 µs with its own code,
 * 6.6-7.5 µs with the prepared one, 341 bytes against 364). The dictionary's tail plus the
 * input fit one 32 KiB window, so nothing slides. Its tables are typed arrays allocated once,
 * at module load and in `prepareDictionary`; a call allocates its result and a few small
 * objects.
 */

/** Window positions (dictionary tail + input) stay below 2^15, so Int16Array holds them. */
const MAX_DICTIONARY_BYTES = 32 * 1024 - MAX_DEFLATE_INPUT_BYTES;
const NONE = -1;
const HASH_BITS = 14;
const HASH_SHIFT = 32 - HASH_BITS;
const HASH_MULTIPLIER = 0x9e3779b1;
/** Positions are indexed by their first 4 bytes, so a match has at least 4 (deflate's 3-byte
 * matches rarely pay in greedy parsing). */
const HASH_BYTES = 4;
/**
 * Candidates tried per position, the length that ends the search, the longest match (within
 * the input) whose inner positions are indexed too (zlib's level 3: 32, 32, 6). Low-entropy text (a few words
 * over and over, log lines) needs deep chains and indexed inner positions to find its long
 * matches: with 8 candidates and 8 indexed bytes it came out up to 2.7 times zlib's size.
 */
const MAX_CHAIN = 32;
const NICE_LENGTH = 32;
const MAX_INSERT_LENGTH = 64;
/** Inputs up to this size take a prepared dictionary's own code (see `prepareDictionary`). */
export const CANNED_MAX_INPUT_BYTES = 1024;
/** Literal bytes every prepared code covers, seen in its samples or not: printable ASCII. */
const CANNED_FIRST_BYTE = 0x20;
const CANNED_LAST_BYTE = 0x7e;

/** A dictionary with its hash chains built, ready for any number of calls. */
export interface PreparedDictionary {
  /** The dictionary bytes matches may refer to: its last 16 KiB at most. */
  readonly bytes: Uint8Array;
  /** The dictionary, then room for one input (a call writes its input there). */
  readonly window: Uint8Array;
  /** `window` read 4 bytes at a time (first byte highest): one load instead of four. */
  readonly view: DataView;
  /** Hash -> the last dictionary position with that hash, or -1. */
  readonly dictionaryHead: Int16Array;
  /** Position -> the previous position with the same hash. A call rewrites the input part. */
  readonly previous: Int16Array;
  /** The code inputs up to `CANNED_MAX_INPUT_BYTES` are written with, if samples were given. */
  readonly canned: CannedCode | undefined;
}

/**
 * Builds the dictionary's hash chains once. Only its last 16 KiB can be referred to. With
 * `samples` (inputs like the ones to come, each at most `MAX_DEFLATE_INPUT_BYTES`), also one
 * dynamic code from their symbols' counts, with a code for every printable ASCII byte and every
 * length and distance as well: a short input whose symbols it all covers is written with it
 * (or fixed, or stored, if smaller), where any other builds its own. The samples shape only
 * how small those inputs come out: every stream carries its code.
 */
export function prepareDictionary(
  dictionary: Uint8Array,
  samples?: readonly Uint8Array[],
): PreparedDictionary {
  const bytes = dictionary.slice(Math.max(0, dictionary.byteLength - MAX_DICTIONARY_BYTES));
  const window = new Uint8Array(bytes.byteLength + MAX_DEFLATE_INPUT_BYTES);
  window.set(bytes);
  const view = new DataView(window.buffer);
  const dictionaryHead = new Int16Array(1 << HASH_BITS).fill(NONE);
  const previous = new Int16Array(window.byteLength).fill(NONE);
  for (let position = 0; position + HASH_BYTES <= bytes.byteLength; position++) {
    const hash = Math.imul(view.getInt32(position), HASH_MULTIPLIER) >>> HASH_SHIFT;
    previous[position] = dictionaryHead[hash]!;
    dictionaryHead[hash] = position;
  }
  // One shape with or without samples: the matcher's loads stay monomorphic.
  const prepared: { -readonly [Key in keyof PreparedDictionary]: PreparedDictionary[Key] } = {
    bytes,
    window,
    view,
    dictionaryHead,
    previous,
    canned: undefined,
  };
  if (samples !== undefined) prepared.canned = cannedCode(prepared, samples);
  return prepared;
}

/** The code `prepareDictionary` builds from its samples' matches against the dictionary. */
function cannedCode(prepared: PreparedDictionary, samples: readonly Uint8Array[]): CannedCode {
  // Every length and distance and the printable bytes get a code, however rare: an input
  // using a symbol without one is written with its own code, at the full cost.
  const literals = new Uint32Array(286).fill(1, 256);
  literals.fill(1, CANNED_FIRST_BYTE, CANNED_LAST_BYTE + 1);
  const distances = new Uint32Array(30).fill(1);
  for (const sample of samples) {
    findMatches(sample, prepared);
    for (let symbol = 0; symbol < 286; symbol++)
      literals[symbol]! += literalLengthFrequency[symbol]!;
    for (let code = 0; code < 30; code++) distances[code]! += distanceFrequency[code]!;
  }
  return prepareCannedCode(literals, distances);
}

// Per-call state, shared by every dictionary: calls are synchronous, never interleaved.
/** Hash -> the last position with that hash: the dictionary's, copied in at each call. */
const head = new Int16Array(1 << HASH_BITS);

/**
 * `header`, then `input` of any size as one raw DEFLATE stream that inflates with `prepared`'s
 * dictionary (with none for a dictionary of no bytes). Up to `MAX_DEFLATE_INPUT_BYTES` this
 * encoder writes it; a longer input, rare, goes to zlib, whose per-call setup is small next to
 * it. zlib is given the dictionary's last 16 KiB, the part this encoder refers to: a suffix of
 * the whole, so inflating with the whole dictionary reads it the same.
 */
export function deflateRaw(
  input: Uint8Array,
  prepared: PreparedDictionary,
  header: number,
): Buffer {
  if (input.byteLength <= MAX_DEFLATE_INPUT_BYTES)
    return deflateRawWithDictionary(input, prepared, header);
  const compressed = deflateRawSync(
    input,
    prepared.bytes.byteLength > 0 ? { dictionary: prepared.bytes } : {},
  );
  return Buffer.concat([Buffer.from([header]), compressed]);
}

/**
 * Compresses `input` (at most `MAX_DEFLATE_INPUT_BYTES`) to one raw DEFLATE stream that
 * inflates with `prepared`'s dictionary. With `header`, that byte comes first in the result
 * (a stored body's format byte), so the stream is copied out once.
 */
export function deflateRawWithDictionary(
  input: Uint8Array,
  prepared: PreparedDictionary,
  header?: number,
): Buffer {
  if (input.byteLength > MAX_DEFLATE_INPUT_BYTES) {
    throw new InvalidArgumentError(
      "input",
      `${input.byteLength} bytes, at most ${MAX_DEFLATE_INPUT_BYTES} can be deflated here`,
    );
  }
  const tokenCount = findMatches(input, prepared);
  const canned = input.byteLength <= CANNED_MAX_INPUT_BYTES ? prepared.canned : undefined;
  let byteLength = canned === undefined ? -1 : writeCannedBlock(input, tokenCount, canned);
  if (byteLength < 0) byteLength = writeBlock(input, tokenCount);
  const offset = header === undefined ? 0 : 1;
  const result = Buffer.allocUnsafe(offset + byteLength);
  if (header !== undefined) result[0] = header;
  result.set(output.subarray(0, byteLength), offset);
  return result;
}

/**
 * Greedy LZ77: at each position the longest match among MAX_CHAIN hash-chain candidates is
 * taken at once (zlib's lazy evaluation, tried, saved a few percent at most for a second search
 * per match). The positions inside a match are indexed only if it lies within the input and
 * is at most MAX_INSERT_LENGTH long. Fills `tokens` and the frequencies.
 */
function findMatches(input: Uint8Array, prepared: PreparedDictionary): number {
  const { window, view, previous } = prepared;
  // Module arrays in locals: the loop below runs once per input byte.
  const heads = head;
  const out = tokens;
  const literalCounts = literalLengthFrequency;
  const distanceCounts = distanceFrequency;
  const start = prepared.bytes.byteLength;
  const end = start + input.byteLength;
  window.set(input, start);
  heads.set(prepared.dictionaryHead);
  literalCounts.fill(0);
  distanceCounts.fill(0);
  /** The last position with 4 bytes to hash (all reads below stay before `end`). */
  const lastHashed = end - HASH_BYTES;
  // The dictionary's last 3 positions hash bytes of the input: they are indexed per call.
  let position = Math.max(0, start - HASH_BYTES + 1);
  for (; position < start && position <= lastHashed; position++) {
    const hash = Math.imul(view.getInt32(position), HASH_MULTIPLIER) >>> HASH_SHIFT;
    previous[position] = heads[hash]!;
    heads[hash] = position;
  }

  let tokenCount = 0;
  position = start;
  while (position <= lastHashed) {
    const key = view.getInt32(position);
    const hash = Math.imul(key, HASH_MULTIPLIER) >>> HASH_SHIFT;
    const candidate = heads[hash]!;
    previous[position] = candidate;
    heads[hash] = position;
    const found =
      candidate === NONE
        ? 0
        : longestMatch(prepared, position, candidate, key, Math.min(MAX_MATCH, end - position));
    if (found === 0) {
      const literal = key >>> 24;
      out[tokenCount++] = literal;
      literalCounts[literal]!++;
      position++;
      continue;
    }
    const length = found & 0xffff;
    const distance = found >>> 16;
    out[tokenCount++] = found;
    literalCounts[LENGTH_SYMBOL[length]!]!++;
    distanceCounts[distanceCode(distance)]!++;
    const matchEnd = position + length;
    // A match into the dictionary has its bytes indexed there already: indexing them again
    // cost ~7% of a model event's time for 0.2% of its size. Matches within the input do.
    if (length <= MAX_INSERT_LENGTH && position - distance >= start) {
      const lastIndexed = Math.min(matchEnd - 1, lastHashed);
      for (position++; position <= lastIndexed; position++) {
        const hash = Math.imul(view.getInt32(position), HASH_MULTIPLIER) >>> HASH_SHIFT;
        previous[position] = heads[hash]!;
        heads[hash] = position;
      }
      position = matchEnd;
      continue;
    }
    // In repeated content a long match goes on at the same distance, where the chains (which
    // skipped its inner positions) would find only a farther, costlier source.
    position = matchEnd;
    while (
      position <= lastHashed &&
      view.getInt32(position - distance) === view.getInt32(position)
    ) {
      const more = matchLength(
        prepared,
        position - distance,
        position,
        Math.min(MAX_MATCH, end - position),
      );
      out[tokenCount++] = (distance << 16) | more;
      literalCounts[LENGTH_SYMBOL[more]!]!++;
      distanceCounts[distanceCode(distance)]!++;
      position += more;
    }
  }
  for (; position < end; position++) {
    const literal = window[position]!;
    out[tokenCount++] = literal;
    literalCounts[literal]!++;
  }
  literalCounts[END_OF_BLOCK] = 1;
  return tokenCount;
}

/**
 * The longest match (at most `limit` bytes, at least 4) for the bytes at `position`, whose
 * first 4 are `key`, among at most MAX_CHAIN candidates from `candidate` on, as the token
 * `distance << 16 | length`; 0 if none. Kept out of `findMatches`, whose literal path stays
 * small.
 */
function longestMatch(
  prepared: PreparedDictionary,
  position: number,
  candidate: number,
  key: number,
  limit: number,
): number {
  const { window, view, previous } = prepared;
  const nice = Math.min(NICE_LENGTH, limit);
  let best = 0;
  let bestDistance = 0;
  let remaining = MAX_CHAIN;
  do {
    // A chance to beat `best` and the same first 4 bytes, before counting the length.
    if (window[candidate + best] === window[position + best] && view.getInt32(candidate) === key) {
      const length = matchLength(prepared, candidate, position, limit);
      if (length > best) {
        best = length;
        bestDistance = position - candidate;
        if (length >= nice) break;
      }
    }
    candidate = previous[candidate]!;
  } while (candidate !== NONE && --remaining > 0);
  return (bestDistance << 16) | best;
}

/** How many bytes (at most `limit`) at `source` equal those at `position`, knowing 4 do. */
function matchLength(
  prepared: PreparedDictionary,
  source: number,
  position: number,
  limit: number,
): number {
  const { window, view } = prepared;
  let length = 4;
  for (; length + 4 <= limit; length += 4) {
    // 4 bytes at a time; the first differing byte is the highest nonzero one.
    const difference = view.getInt32(source + length) ^ view.getInt32(position + length);
    if (difference !== 0) return length + (Math.clz32(difference) >>> 3);
  }
  while (length < limit && window[source + length] === window[position + length]) length++;
  return length;
}
