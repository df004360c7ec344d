/**
 * The block half of the DEFLATE encoder (deflate.ts finds the matches): the token buffer and
 * symbol frequencies the matcher fills, the Huffman codes built from them (huffman-code.ts)
 * and the one final block written from them, dynamic, fixed or
 * stored, whichever is smallest; or, for a short input, a dynamic block with a code prepared
 * once (`prepareCannedCode`), fixed or stored. Tables are typed arrays allocated once at module
 * load.
 */

import { buildCode, canonicalCodes, cost, MAX_CODE_BITS } from "./huffman-code.js";

/** The largest input `deflateRawWithDictionary` takes; longer ones are zlib's job. */
export const MAX_DEFLATE_INPUT_BYTES = 16 * 1024;
export const MAX_MATCH = 258;

// Per-call state, filled by the matcher then read here: calls are synchronous, never
// interleaved.
/** A literal byte, or `distance << 16 | length` for a match (distance >= 1). */
export const tokens = new Uint32Array(MAX_DEFLATE_INPUT_BYTES);
export const literalLengthFrequency = new Uint32Array(286);
export const distanceFrequency = new Uint32Array(30);
/** The stream is written here, then copied out at its exact size. */
export const output = new Uint8Array(MAX_DEFLATE_INPUT_BYTES + 1024);
const outputView = new DataView(output.buffer);
// RFC 1951 3.2.5. Length codes 257..284 carry 0,0,0,0,0,0,0,0,1,1,1,1,2,2,2,2,... extra bits
// and 285 is 258 exactly; distance codes carry 0,0,0,0,1,1,2,2,...,13,13.
export const END_OF_BLOCK = 256;
/** Length 3..258 -> its literal/length symbol (257..285). */
export const LENGTH_SYMBOL = new Uint16Array(MAX_MATCH + 1);
/** Length 3..258 -> its extra bits' value | their count << 16. */
const LENGTH_EXTRA = new Uint32Array(MAX_MATCH + 1);
/** Literal/length symbol -> its extra bit count (for the size estimate). */
const LITERAL_EXTRA_BITS = new Uint8Array(286);
const DISTANCE_BASE = new Uint16Array(30);
const DISTANCE_EXTRA_BITS = new Uint8Array(30);
/** Distance - 1 below 256 -> its code; from 256 on, 256 + ((distance - 1) >> 7) -> its code. */
const DISTANCE_CODE = new Uint8Array(512);
for (let code = 0, base = 3; code < 29; code++) {
  const extraBits = code < 8 || code === 28 ? 0 : (code >> 2) - 1;
  if (code === 28) base = MAX_MATCH;
  for (let offset = 0; offset < 1 << extraBits; offset++) {
    LENGTH_SYMBOL[base + offset] = 257 + code;
    LENGTH_EXTRA[base + offset] = offset | (extraBits << 16);
  }
  LITERAL_EXTRA_BITS[257 + code] = extraBits;
  base += 1 << extraBits;
}
for (let code = 0, base = 1; code < 30; code++) {
  const extraBits = code < 4 ? 0 : (code >> 1) - 1;
  DISTANCE_BASE[code] = base;
  DISTANCE_EXTRA_BITS[code] = extraBits;
  for (let distance = base; distance < base + (1 << extraBits); distance++) {
    DISTANCE_CODE[distance <= 256 ? distance - 1 : 256 + ((distance - 1) >> 7)] = code;
  }
  base += 1 << extraBits;
}

export function distanceCode(distance: number): number {
  return DISTANCE_CODE[distance <= 256 ? distance - 1 : 256 + ((distance - 1) >> 7)]!;
}

/** The order code-length code lengths are sent in (RFC 1951 3.2.7). */
const CODE_LENGTH_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
/** Extra bits after code-length symbols 16 (repeat the previous 3-6 times), 17, 18 (zeros). */
const CODE_LENGTH_EXTRA_BITS = Uint8Array.from({ length: 19 }, (_, symbol) =>
  symbol < 16 ? 0 : [2, 3, 7][symbol - 16]!,
);
const MAX_CODE_LENGTH_BITS = 7;
// The fixed codes span 288 and 32 symbols (RFC 1951 3.2.6), two of each never used.
const FIXED_LITERAL_LENGTHS = new Uint8Array(288).fill(8, 0, 144).fill(9, 144, 256).fill(7, 256);
FIXED_LITERAL_LENGTHS.fill(8, 280);
const FIXED_DISTANCE_LENGTHS = new Uint8Array(32).fill(5);

/** Per tree: symbol -> code length; symbol -> bit-reversed code | length << 16. */
const literalLengths = new Uint8Array(286);
const literalCodes = new Uint32Array(286);
const distanceLengths = new Uint8Array(30);
const distanceCodes = new Uint32Array(30);
const codeLengthFrequency = new Uint32Array(19);
const codeLengthLengths = new Uint8Array(19);
const codeLengthCodes = new Uint32Array(19);
const FIXED_LITERAL_CODES = new Uint32Array(288);
const FIXED_DISTANCE_CODES = new Uint32Array(32);
canonicalCodes(FIXED_LITERAL_LENGTHS, FIXED_LITERAL_CODES);
canonicalCodes(FIXED_DISTANCE_LENGTHS, FIXED_DISTANCE_CODES);
// Scratch for the dynamic block header.
const allLengths = new Uint8Array(286 + 30);
const runSymbols = new Uint8Array(286 + 30);
const runExtra = new Uint8Array(286 + 30);
/**
 * The code lengths of both trees as one sequence with runs folded (16: repeat the previous
 * length 3-6 times, 17: 3-10 zeros, 18: 11-138 zeros), with their frequencies. Returns the
 * number of symbols.
 */
function foldLengths(literalCount: number, distanceCount: number): number {
  allLengths.set(literalLengths.subarray(0, literalCount));
  allLengths.set(distanceLengths.subarray(0, distanceCount), literalCount);
  const total = literalCount + distanceCount;
  let count = 0;
  let index = 0;
  while (index < total) {
    const value = allLengths[index]!;
    let run = 1;
    while (index + run < total && allLengths[index + run] === value) run++;
    index += run;
    if (value === 0) {
      for (; run >= 11; run -= Math.min(run, 138)) {
        runSymbols[count] = 18;
        runExtra[count++] = Math.min(run, 138) - 11;
      }
      if (run >= 3) {
        runSymbols[count] = 17;
        runExtra[count++] = run - 3;
        run = 0;
      }
    } else {
      runSymbols[count++] = value;
      run--;
      for (; run >= 3; run -= Math.min(run, 6)) {
        runSymbols[count] = 16;
        runExtra[count++] = Math.min(run, 6) - 3;
      }
    }
    for (; run > 0; run--) runSymbols[count++] = value;
  }
  codeLengthFrequency.fill(0);
  for (let run = 0; run < count; run++) codeLengthFrequency[runSymbols[run]!]!++;
  return count;
}

/** Writes bits least significant first, as deflate packs them, into `output`. */
class BitWriter {
  position = 0;
  bits = 0;
  count = 0;

  /** `value` has at most 16 bits. */
  write(value: number, width: number): void {
    this.bits |= value << this.count;
    this.count += width;
    while (this.count >= 8) {
      output[this.position++] = this.bits;
      this.bits >>>= 8;
      this.count -= 8;
    }
  }

  /** Writes a packed `code | length << 16`. */
  writeCode(packed: number): void {
    this.write(packed & 0xffff, packed >>> 16);
  }

  /** Pads to a byte boundary with zero bits. */
  align(): void {
    if (this.count > 0) this.write(0, 8 - this.count);
  }
}

const BLOCK_STORED = 0;
const BLOCK_FIXED = 1;
const BLOCK_DYNAMIC = 2;

/**
 * A dynamic block's code prepared once and written by every call that takes it: building a
 * short input's own three codes and folding their lengths costs about as much as finding its
 * matches. Its output is still one final dynamic block carrying its code, so any inflater reads
 * it, and nothing stored depends on which code wrote it.
 */
export interface CannedCode {
  /** Literal/length symbol -> bit-reversed code | length << 16; 0 where it has no code. */
  readonly literalCodes: Uint32Array;
  /** Distance code -> the same. */
  readonly distanceCodes: Uint32Array;
  /** The block's first bits (BFINAL, BTYPE and the code), whole bytes... */
  readonly headerBytes: Uint8Array;
  /** ...then these `headerTailCount` bits. */
  readonly headerTail: number;
  readonly headerTailCount: number;
  /** All of the above, in bits. */
  readonly headerBits: number;
}

/**
 * A code for inputs whose symbols are counted in `literalFrequency` (286) and
 * `distanceFrequency` (30): a symbol counted 0 gets no code, and an input using it is written
 * by `writeBlock`. Uses the per-call tables: not to be called during a call.
 */
export function prepareCannedCode(
  literalFrequency: Uint32Array,
  distanceFrequency: Uint32Array,
): CannedCode {
  buildTrees(literalFrequency, distanceFrequency);
  const writer = new BitWriter();
  writer.write(1, 1);
  writer.write(BLOCK_DYNAMIC, 2);
  writeTreeHeader(writer, foldTrees());
  const codesOf = (lengths: Uint8Array, codes: Uint32Array) =>
    Uint32Array.from(lengths, (bits, symbol) => (bits === 0 ? 0 : codes[symbol]!));
  return {
    literalCodes: codesOf(literalLengths, literalCodes),
    distanceCodes: codesOf(distanceLengths, distanceCodes),
    headerBytes: output.slice(0, writer.position),
    headerTail: writer.bits,
    headerTailCount: writer.count,
    headerBits: writer.position * 8 + writer.count,
  };
}

/**
 * Writes one final block into `output` with `canned`'s code, the fixed code or stored,
 * whichever is smallest, and returns its byte length; -1 (nothing written) if the input uses a
 * symbol `canned` has no code for. Counting the three sizes is one pass over the frequencies.
 */
export function writeCannedBlock(
  input: Uint8Array,
  tokenCount: number,
  canned: CannedCode,
): number {
  const cannedLiterals = canned.literalCodes;
  const cannedDistances = canned.distanceCodes;
  let cannedBits = canned.headerBits;
  let fixedBits = 3;
  let extraBits = 0;
  for (let symbol = 0; symbol < 286; symbol++) {
    const count = literalLengthFrequency[symbol]!;
    if (count === 0) continue;
    const bits = cannedLiterals[symbol]! >>> 16;
    if (bits === 0) return -1;
    cannedBits += count * bits;
    fixedBits += count * FIXED_LITERAL_LENGTHS[symbol]!;
    extraBits += count * LITERAL_EXTRA_BITS[symbol]!;
  }
  for (let code = 0; code < 30; code++) {
    const count = distanceFrequency[code]!;
    if (count === 0) continue;
    const bits = cannedDistances[code]! >>> 16;
    if (bits === 0) return -1;
    cannedBits += count * bits;
    fixedBits += count * FIXED_DISTANCE_LENGTHS[code]!;
    extraBits += count * DISTANCE_EXTRA_BITS[code]!;
  }
  cannedBits += extraBits;
  fixedBits += extraBits;
  const storedBits = (5 + input.byteLength) * 8;
  if (storedBits <= cannedBits && storedBits <= fixedBits) return writeStored(input);
  const writer = new BitWriter();
  let bits: number;
  if (fixedBits <= cannedBits) {
    bits = fixedBits;
    writer.write(1, 1);
    writer.write(BLOCK_FIXED, 2);
    writeTokens(writer, tokenCount, FIXED_LITERAL_CODES, FIXED_DISTANCE_CODES);
  } else {
    bits = cannedBits;
    output.set(canned.headerBytes);
    writer.position = canned.headerBytes.byteLength;
    writer.bits = canned.headerTail;
    writer.count = canned.headerTailCount;
    writeTokens(writer, tokenCount, cannedLiterals, cannedDistances);
  }
  return finish(writer, bits);
}

/** Writes one final block, of the smallest kind, into `output`; returns its byte length. */
export function writeBlock(input: Uint8Array, tokenCount: number): number {
  const { dataBits, fixedBits } = buildTrees(literalLengthFrequency, distanceFrequency);
  const tree = foldTrees();
  const dynamicBits = tree.headerBits + dataBits;
  const storedBits = (5 + input.byteLength) * 8;
  if (storedBits <= dynamicBits && storedBits <= fixedBits) return writeStored(input);
  const writer = new BitWriter();
  writer.write(1, 1); // BFINAL: the only block
  if (fixedBits <= dynamicBits) {
    writer.write(BLOCK_FIXED, 2);
    writeTokens(writer, tokenCount, FIXED_LITERAL_CODES, FIXED_DISTANCE_CODES);
    return finish(writer, fixedBits);
  }
  writer.write(BLOCK_DYNAMIC, 2);
  writeTreeHeader(writer, tree);
  writeTokens(writer, tokenCount, literalCodes, distanceCodes);
  return finish(writer, dynamicBits);
}

/**
 * The literal/length and distance codes for these frequencies, into `literalLengths`,
 * `literalCodes`, `distanceLengths`, `distanceCodes`; their data's size in bits, and the size
 * of the same data with the fixed code (a fixed block's 3 header bits included).
 */
function buildTrees(
  literalFrequency: Uint32Array,
  distanceFrequency: Uint32Array,
): { dataBits: number; fixedBits: number } {
  cost.built = cost.fixed = cost.extra = 0;
  buildCode(
    literalFrequency,
    MAX_CODE_BITS,
    literalLengths,
    literalCodes,
    FIXED_LITERAL_LENGTHS,
    LITERAL_EXTRA_BITS,
  );
  buildCode(
    distanceFrequency,
    MAX_CODE_BITS,
    distanceLengths,
    distanceCodes,
    FIXED_DISTANCE_LENGTHS,
    DISTANCE_EXTRA_BITS,
  );
  return { dataBits: cost.built + cost.extra, fixedBits: 3 + cost.fixed + cost.extra };
}

interface TreeHeader {
  literalCount: number;
  distanceCount: number;
  orderCount: number;
  runCount: number;
  /** The whole dynamic header in bits, BFINAL and BTYPE included. */
  headerBits: number;
}

/** The code lengths of `buildTrees`' codes folded, and the code-length code built for them. */
function foldTrees(): TreeHeader {
  let literalCount = 286;
  while (literalLengths[literalCount - 1] === 0) literalCount--;
  let distanceCount = 30;
  while (distanceLengths[distanceCount - 1] === 0) distanceCount--;
  const runCount = foldLengths(literalCount, distanceCount);
  cost.built = cost.fixed = cost.extra = 0;
  buildCode(
    codeLengthFrequency,
    MAX_CODE_LENGTH_BITS,
    codeLengthLengths,
    codeLengthCodes,
    CODE_LENGTH_EXTRA_BITS, // (code lengths have no fixed code: this size is not used)
    CODE_LENGTH_EXTRA_BITS,
  );
  let orderCount = 19;
  while (orderCount > 4 && codeLengthLengths[CODE_LENGTH_ORDER[orderCount - 1]!] === 0) {
    orderCount--;
  }
  const headerBits = 3 + 5 + 5 + 4 + 3 * orderCount + cost.built + cost.extra;
  return { literalCount, distanceCount, orderCount, runCount, headerBits };
}

/** A dynamic block's header after BFINAL and BTYPE: counts, then the folded code lengths. */
function writeTreeHeader(writer: BitWriter, tree: TreeHeader): void {
  writer.write(tree.literalCount - 257, 5);
  writer.write(tree.distanceCount - 1, 5);
  writer.write(tree.orderCount - 4, 4);
  for (let index = 0; index < tree.orderCount; index++) {
    writer.write(codeLengthLengths[CODE_LENGTH_ORDER[index]!]!, 3);
  }
  for (let index = 0; index < tree.runCount; index++) {
    const symbol = runSymbols[index]!;
    writer.writeCode(codeLengthCodes[symbol]!);
    if (symbol >= 16) writer.write(runExtra[index]!, CODE_LENGTH_EXTRA_BITS[symbol]!);
  }
}

/** `input` as one final stored block; returns its byte length. */
function writeStored(input: Uint8Array): number {
  const writer = new BitWriter();
  writer.write(1, 1);
  writer.write(BLOCK_STORED, 2);
  writer.align();
  writer.write(input.byteLength, 16);
  writer.write(~input.byteLength & 0xffff, 16);
  output.set(input, writer.position);
  writer.position += input.byteLength;
  return finish(writer, (5 + input.byteLength) * 8);
}

/** Pads the block to a byte; checks it came out at the `bits` it was sized at. */
function finish(writer: BitWriter, bits: number): number {
  writer.align();
  const byteLength = (bits + 7) >>> 3;
  if (writer.position !== byteLength) {
    throw new Error(`deflate: wrote ${writer.position} bytes, sized ${byteLength} (a bug)`);
  }
  return byteLength;
}

/**
 * The tokens, then end-of-block. The hot loop keeps the bit buffer in locals and flushes
 * 16 bits at a time: below 16 pending bits, any code or extra field (at most 15) fits in 31.
 */
function writeTokens(
  writer: BitWriter,
  tokenCount: number,
  literalTable: Uint32Array,
  distanceTable: Uint32Array,
): void {
  const view = outputView;
  const all = tokens;
  let position = writer.position;
  let bits = writer.bits;
  let count = writer.count;
  for (let index = 0; index < tokenCount; index++) {
    const token = all[index]!;
    if (token < 256) {
      const packed = literalTable[token]!;
      bits |= (packed & 0xffff) << count;
      count += packed >>> 16;
    } else {
      const length = token & 0xffff;
      const packed = literalTable[LENGTH_SYMBOL[length]!]!;
      bits |= (packed & 0xffff) << count;
      count += packed >>> 16;
      if (count >= 16) {
        view.setUint16(position, bits, true);
        position += 2;
        bits >>>= 16;
        count -= 16;
      }
      const extra = LENGTH_EXTRA[length]!;
      bits |= (extra & 0xffff) << count;
      count += extra >>> 16;
      const distance = token >>> 16;
      const code = distanceCode(distance);
      const distancePacked = distanceTable[code]!;
      if (count >= 16) {
        view.setUint16(position, bits, true);
        position += 2;
        bits >>>= 16;
        count -= 16;
      }
      bits |= (distancePacked & 0xffff) << count;
      count += distancePacked >>> 16;
      if (count >= 16) {
        view.setUint16(position, bits, true);
        position += 2;
        bits >>>= 16;
        count -= 16;
      }
      bits |= (distance - DISTANCE_BASE[code]!) << count;
      count += DISTANCE_EXTRA_BITS[code]!;
    }
    if (count >= 16) {
      view.setUint16(position, bits, true);
      position += 2;
      bits >>>= 16;
      count -= 16;
    }
  }
  writer.position = position;
  writer.bits = bits;
  writer.count = count;
  writer.writeCode(literalTable[END_OF_BLOCK]!);
}
