/**
 * The block half of the DEFLATE encoder (deflate.ts finds the matches): the token buffer and
 * symbol frequencies the matcher fills, the Huffman codes built from them (dynamic-trees.ts)
 * and the one final block written from them, dynamic, fixed or
 * stored, whichever is smallest; or, for a short input, a dynamic block with a code prepared
 * once (`prepareCannedCode`), fixed or stored. Tables are typed arrays allocated once at module
 * load.
 */

import {
  DISTANCE_BASE,
  DISTANCE_EXTRA_BITS,
  distanceCode,
  END_OF_BLOCK,
  FIXED_DISTANCE_CODES,
  FIXED_DISTANCE_LENGTHS,
  FIXED_LITERAL_CODES,
  FIXED_LITERAL_LENGTHS,
  LENGTH_EXTRA,
  LENGTH_SYMBOL,
  LITERAL_EXTRA_BITS,
} from "./deflate-symbols.js";
import {
  buildTrees,
  distanceCodes,
  distanceLengths,
  foldTrees,
  literalCodes,
  literalLengths,
  writeTreeHeader,
} from "./dynamic-trees.js";

/** The largest input `deflateRawWithDictionary` takes; longer ones are zlib's job. */
export const MAX_DEFLATE_INPUT_BYTES = 16 * 1024;

// Per-call state, filled by the matcher then read here: calls are synchronous, never
// interleaved.
/** A literal byte, or `distance << 16 | length` for a match (distance >= 1). */
export const tokens = new Uint32Array(MAX_DEFLATE_INPUT_BYTES);
export const literalLengthFrequency = new Uint32Array(286);
export const distanceFrequency = new Uint32Array(30);
/** The stream is written here, then copied out at its exact size. */
export const output = new Uint8Array(MAX_DEFLATE_INPUT_BYTES + 1024);
const outputView = new DataView(output.buffer);

/** Writes bits least significant first, as deflate packs them, into `output`. */
export class BitWriter {
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
