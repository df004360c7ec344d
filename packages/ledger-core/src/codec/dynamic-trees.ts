/**
 * The codes of a dynamic DEFLATE block (deflate-block.ts writes the block): the
 * literal/length and distance codes built for its frequencies (huffman-code.ts), and the
 * header that carries them, their code lengths folded into runs under a code of their own.
 */

import type { BitWriter } from "./deflate-block.js";
import {
  DISTANCE_EXTRA_BITS,
  FIXED_DISTANCE_LENGTHS,
  FIXED_LITERAL_LENGTHS,
  LITERAL_EXTRA_BITS,
} from "./deflate-symbols.js";
import { buildCode, cost, MAX_CODE_BITS } from "./huffman-code.js";

/** The order code-length code lengths are sent in (RFC 1951 3.2.7). */
const CODE_LENGTH_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15];
/** Extra bits after code-length symbols 16 (repeat the previous 3-6 times), 17, 18 (zeros). */
const CODE_LENGTH_EXTRA_BITS = Uint8Array.from({ length: 19 }, (_, symbol) =>
  symbol < 16 ? 0 : [2, 3, 7][symbol - 16]!,
);
const MAX_CODE_LENGTH_BITS = 7;

/** Per tree: symbol -> code length; symbol -> bit-reversed code | length << 16. */
export const literalLengths = new Uint8Array(286);
export const literalCodes = new Uint32Array(286);
export const distanceLengths = new Uint8Array(30);
export const distanceCodes = new Uint32Array(30);
const codeLengthFrequency = new Uint32Array(19);
const codeLengthLengths = new Uint8Array(19);
const codeLengthCodes = new Uint32Array(19);
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

/**
 * The literal/length and distance codes for these frequencies, into `literalLengths`,
 * `literalCodes`, `distanceLengths`, `distanceCodes`; their data's size in bits, and the size
 * of the same data with the fixed code (a fixed block's 3 header bits included).
 */
export function buildTrees(
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
export function foldTrees(): TreeHeader {
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
export function writeTreeHeader(writer: BitWriter, tree: TreeHeader): void {
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
