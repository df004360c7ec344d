/**
 * Huffman codes for the DEFLATE encoder (deflate-block.ts writes the blocks): length-limited
 * code lengths from symbol frequencies (Moffat and Katajainen's in-place method, as in miniz),
 * then canonical codes (RFC 1951 3.2.2), bit-reversed and packed as `code | length << 16`.
 * Scratch tables are typed arrays allocated once at module load; calls are synchronous.
 */

export const MAX_CODE_BITS = 15;
/** A byte with its bits in reverse order. */
const REVERSED_BYTE = Uint8Array.from({ length: 256 }, (_, value) => {
  let reversed = 0;
  for (let bit = 0; bit < 8; bit++) reversed |= ((value >> bit) & 1) << (7 - bit);
  return reversed;
});
// Scratch for building codes.
const usedSymbols = new Uint16Array(288);
const sortKeys = new Uint32Array(286);
const depths = new Int32Array(286);
/** Codes per bit length; a Huffman depth never exceeds the symbol count. */
const lengthCount = new Int32Array(289);
const nextCode = new Uint16Array(MAX_CODE_BITS + 1);
/** What `buildCode` measures, in bits: with the built code, with the fixed code, extra bits. */
export const cost = { built: 0, fixed: 0, extra: 0 };

/** Canonical codes for a complete code's `lengths` (the fixed codes), into `codes`. */
export function canonicalCodes(lengths: Uint8Array, codes: Uint32Array): void {
  lengthCount.fill(0);
  for (let symbol = 0; symbol < lengths.length; symbol++) {
    lengthCount[lengths[symbol]!]!++;
    usedSymbols[symbol] = symbol;
  }
  assignCodes(lengths, lengths.length, codes);
}

/**
 * A Huffman code for `frequency`, no length over `maxBits`, into `lengths` and `codes`; adds
 * to `cost` its size and the size with `fixedLengths`, and the extra bits (`extraBits`). A
 * code always gets two symbols at least: a one-symbol code is incomplete, which inflaters
 * reject or special-case.
 */
export function buildCode(
  frequency: Uint32Array,
  maxBits: number,
  lengths: Uint8Array,
  codes: Uint32Array,
  fixedLengths: Uint8Array,
  extraBits: Uint8Array,
): void {
  lengths.fill(0);
  let used = 0;
  let fixedSize = 0;
  let extraSize = 0;
  for (let symbol = 0; symbol < frequency.length; symbol++) {
    const count = frequency[symbol]!;
    if (count === 0) continue;
    sortKeys[used] = count * 512 + symbol;
    usedSymbols[used++] = symbol;
    fixedSize += count * fixedLengths[symbol]!;
    extraSize += count * extraBits[symbol]!;
  }
  cost.fixed += fixedSize;
  cost.extra += extraSize;
  lengthCount.fill(0);
  if (used < 2) {
    const only = used === 1 ? usedSymbols[0]! : 0;
    const other = only === 0 ? 1 : 0;
    lengths[only] = 1;
    lengths[other] = 1;
    usedSymbols[0] = Math.min(only, other);
    usedSymbols[1] = Math.max(only, other);
    lengthCount[1] = 2;
    cost.built += frequency[only]!;
    assignCodes(lengths, 2, codes);
    return;
  }
  const keys = sortKeys.subarray(0, used).sort();
  for (let index = 0; index < used; index++) depths[index] = keys[index]! >>> 9;
  minimumRedundancy(depths, used);
  for (let index = 0; index < used; index++) lengthCount[depths[index]!]!++;
  limitLengths(maxBits, used);
  // The most frequent symbols (last in `keys`) take the shortest codes.
  let builtSize = 0;
  let next = used;
  for (let bits = 1; bits <= maxBits; bits++) {
    for (let left = lengthCount[bits]!; left > 0; left--) {
      const key = keys[--next]!;
      lengths[key & 511] = bits;
      builtSize += (key >>> 9) * bits;
    }
  }
  cost.built += builtSize;
  assignCodes(lengths, used, codes);
}

/**
 * Moffat and Katajainen's in-place Huffman code lengths: `items[0..count)` holds frequencies
 * in ascending order and receives each one's depth (as in miniz).
 */
function minimumRedundancy(items: Int32Array, count: number): void {
  items[0] = items[0]! + items[1]!;
  let root = 0;
  let leaf = 2;
  for (let next = 1; next < count - 1; next++) {
    if (leaf >= count || items[root]! < items[leaf]!) {
      items[next] = items[root]!;
      items[root++] = next;
    } else {
      items[next] = items[leaf++]!;
    }
    if (leaf >= count || (root < next && items[root]! < items[leaf]!)) {
      items[next] = items[next]! + items[root]!;
      items[root++] = next;
    } else {
      items[next] = items[next]! + items[leaf++]!;
    }
  }
  items[count - 2] = 0;
  for (let next = count - 3; next >= 0; next--) items[next] = items[items[next]!]! + 1;
  let available = 1;
  let used = 0;
  let depth = 0;
  let node = count - 2;
  let next = count - 1;
  while (available > 0) {
    while (node >= 0 && items[node] === depth) {
      used++;
      node--;
    }
    while (available > used) {
      items[next--] = depth;
      available--;
    }
    available = 2 * used;
    depth++;
    used = 0;
  }
}

/**
 * Caps `lengthCount` at `maxBits` keeping the code complete (Kraft sum exactly 1): each step
 * drops one code of the longest length and splits a shorter one into two (as in miniz).
 */
function limitLengths(maxBits: number, used: number): void {
  for (let bits = maxBits + 1; bits <= used; bits++) {
    lengthCount[maxBits] = lengthCount[maxBits]! + lengthCount[bits]!;
    lengthCount[bits] = 0;
  }
  let total = 0;
  for (let bits = maxBits; bits > 0; bits--) total += lengthCount[bits]! << (maxBits - bits);
  while (total !== 1 << maxBits) {
    lengthCount[maxBits] = lengthCount[maxBits]! - 1;
    for (let bits = maxBits - 1; bits > 0; bits--) {
      if (lengthCount[bits] !== 0) {
        lengthCount[bits] = lengthCount[bits]! - 1;
        lengthCount[bits + 1] = lengthCount[bits + 1]! + 2;
        break;
      }
    }
    total--;
  }
}

/**
 * Canonical codes (RFC 1951 3.2.2) for the `used` symbols in `usedSymbols` (ascending), with
 * `lengthCount` counting their lengths: bit-reversed, since deflate sends a code's first bit
 * first, and packed as `code | length << 16`. Throws unless the code is complete.
 */
function assignCodes(lengths: Uint8Array, used: number, codes: Uint32Array): void {
  let code = 0;
  for (let bits = 1; bits <= MAX_CODE_BITS; bits++) {
    code = (code + lengthCount[bits - 1]!) << 1;
    nextCode[bits] = code;
  }
  if (lengthCount[0] !== 0 || code + lengthCount[MAX_CODE_BITS]! !== 1 << MAX_CODE_BITS) {
    throw new Error("deflate: a Huffman code is not complete (a bug, nothing was stored)");
  }
  for (let index = 0; index < used; index++) {
    const symbol = usedSymbols[index]!;
    const bits = lengths[symbol]!;
    const value = nextCode[bits]!;
    nextCode[bits] = value + 1;
    const reversed = (REVERSED_BYTE[value & 0xff]! << 8) | REVERSED_BYTE[value >>> 8]!;
    codes[symbol] = (reversed >>> (16 - bits)) | (bits << 16);
  }
}
