/**
 * The symbols of RFC 1951 that the DEFLATE block writer (deflate-block.ts) and the matcher
 * (deflate.ts) share: the length and distance codes with their extra bits, and the fixed
 * codes. Tables are typed arrays filled once at module load.
 */

import { canonicalCodes } from "./huffman-code.js";

export const MAX_MATCH = 258;
// RFC 1951 3.2.5. Length codes 257..284 carry 0,0,0,0,0,0,0,0,1,1,1,1,2,2,2,2,... extra bits
// and 285 is 258 exactly; distance codes carry 0,0,0,0,1,1,2,2,...,13,13.
export const END_OF_BLOCK = 256;
/** Length 3..258 -> its literal/length symbol (257..285). */
export const LENGTH_SYMBOL = new Uint16Array(MAX_MATCH + 1);
/** Length 3..258 -> its extra bits' value | their count << 16. */
export const LENGTH_EXTRA = new Uint32Array(MAX_MATCH + 1);
/** Literal/length symbol -> its extra bit count (for the size estimate). */
export const LITERAL_EXTRA_BITS = new Uint8Array(286);
export const DISTANCE_BASE = new Uint16Array(30);
export const DISTANCE_EXTRA_BITS = new Uint8Array(30);
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
// The fixed codes span 288 and 32 symbols (RFC 1951 3.2.6), two of each never used.
export const FIXED_LITERAL_LENGTHS = new Uint8Array(288)
  .fill(8, 0, 144)
  .fill(9, 144, 256)
  .fill(7, 256);
FIXED_LITERAL_LENGTHS.fill(8, 280);
export const FIXED_DISTANCE_LENGTHS = new Uint8Array(32).fill(5);
export const FIXED_LITERAL_CODES = new Uint32Array(288);
export const FIXED_DISTANCE_CODES = new Uint32Array(32);
canonicalCodes(FIXED_LITERAL_LENGTHS, FIXED_LITERAL_CODES);
canonicalCodes(FIXED_DISTANCE_LENGTHS, FIXED_DISTANCE_CODES);
