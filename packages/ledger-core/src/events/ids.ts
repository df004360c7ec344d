import { randomFillSync } from "node:crypto";
import { InvalidEventError } from "./errors.js";

let lastMs = 0;
let sequence = 0;

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
// Random bytes are drawn 4 KiB at a time: one syscall per 256 ids instead of one per id.
const pool = new Uint8Array(4096);
let poolOffset = pool.length;

/**
 * A UUIDv7 (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter that keeps ids made in
 * the same millisecond in order, then random bits. Ids sort by creation time.
 */
export function uuidv7(): string {
  let ms = Date.now();
  if (ms <= lastMs) {
    sequence++;
    if (sequence > 0xfff) {
      lastMs++;
      sequence = 0;
    }
    ms = lastMs;
  } else {
    lastMs = ms;
    sequence = 0;
  }
  if (poolOffset + 10 > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const r = poolOffset;
  poolOffset += 10;
  const h = HEX as string[];
  const high = Math.floor(ms / 2 ** 32);
  const low = ms >>> 0;
  return (
    h[(high >>> 8) & 0xff]! +
    h[high & 0xff]! +
    h[(low >>> 24) & 0xff]! +
    h[(low >>> 16) & 0xff]! +
    "-" +
    h[(low >>> 8) & 0xff]! +
    h[low & 0xff]! +
    "-" +
    h[0x70 | ((sequence >>> 8) & 0x0f)]! +
    h[sequence & 0xff]! +
    "-" +
    h[0x80 | (pool[r]! & 0x3f)]! +
    h[pool[r + 1]!]! +
    "-" +
    h[pool[r + 2]!]! +
    h[pool[r + 3]!]! +
    h[pool[r + 4]!]! +
    h[pool[r + 5]!]! +
    h[pool[r + 6]!]! +
    h[pool[r + 7]!]!
  );
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/;

// A lone UTF-16 surrogate has no UTF-8 form: stores would write it as U+FFFD and two ids
// ("a\uD800", "a\uFFFD") would become one.
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Ids are opaque strings of 1–255 characters, well-formed UTF-16, with no control characters. */
// Most ids (UUIDs, slugs) are printable ASCII: one quick test settles them.
const printableAscii = /^[\x20-\x7e]{1,255}$/;

export function isValidId(value: unknown): value is string {
  if (typeof value === "string" && printableAscii.test(value)) return true;
  return (
    typeof value === "string" &&
    value.length >= 1 &&
    value.length <= 255 &&
    !controlCharacters.test(value) &&
    !loneSurrogate.test(value)
  );
}

/** Throws `invalid-event` naming `path` unless `value` is a valid id. */
export function assertId(value: unknown, path: string): asserts value is string {
  if (!isValidId(value)) {
    const shown =
      typeof value === "string"
        ? `a string of length ${value.length}${controlCharacters.test(value) ? " with control characters" : ""}${loneSurrogate.test(value) ? " with a lone surrogate" : ""}`
        : typeof value;
    throw new InvalidEventError(
      path,
      `an id must be a string of 1-255 characters without control characters or lone surrogates, got ${shown}`,
    );
  }
}
