import { createHash } from "node:crypto";
import { InvalidEventError } from "../events/errors.js";
import { isBlobRef } from "./validate.js";

/** Bytes of blob content (strings are stored as UTF-8). */
export function blobBytes(content: Uint8Array | string): Uint8Array {
  if (typeof content === "string") return new TextEncoder().encode(content);
  if (content instanceof Uint8Array) return content;
  throw new InvalidEventError("$", "blob content must be a Uint8Array or a string");
}

/** The `sha256:<hex>` reference of some content. */
export function blobRef(bytes: Uint8Array): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** Throws `invalid-event` unless `ref` is a well-formed reference. */
export function assertBlobRef(ref: unknown, path = "$"): asserts ref is string {
  if (!isBlobRef(ref))
    throw new InvalidEventError(path, "a blob reference must be sha256:<64 lowercase hex>");
}
