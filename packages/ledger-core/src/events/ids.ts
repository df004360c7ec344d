import { randomBytes } from "node:crypto";
import { InvalidEventError } from "./errors.js";

let lastMs = 0;
let sequence = 0;

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
  const bytes = randomBytes(16);
  bytes[0] = Math.floor(ms / 2 ** 40) & 0xff;
  bytes[1] = Math.floor(ms / 2 ** 32) & 0xff;
  bytes[2] = (ms >>> 24) & 0xff;
  bytes[3] = (ms >>> 16) & 0xff;
  bytes[4] = (ms >>> 8) & 0xff;
  bytes[5] = ms & 0xff;
  bytes[6] = 0x70 | ((sequence >>> 8) & 0x0f);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what we reject
const controlCharacters = /[\u0000-\u001f\u007f-\u009f]/;

/** Ids are opaque strings of 1–255 characters with no control characters. */
export function isValidId(value: unknown): value is string {
  return (
    typeof value === "string" &&
    value.length >= 1 &&
    value.length <= 255 &&
    !controlCharacters.test(value)
  );
}

/** Throws `invalid-event` naming `path` unless `value` is a valid id. */
export function assertId(value: unknown, path: string): asserts value is string {
  if (!isValidId(value)) {
    const shown =
      typeof value === "string"
        ? `a string of length ${value.length}${controlCharacters.test(value) ? " with control characters" : ""}`
        : typeof value;
    throw new InvalidEventError(
      path,
      `an id must be a string of 1-255 characters without control characters, got ${shown}`,
    );
  }
}
