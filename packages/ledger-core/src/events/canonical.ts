import { createHash } from "node:crypto";
import type { JsonValue } from "./json.js";

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialisation of a plain JSON value: object keys
 * sorted by UTF-16 code units, no whitespace, numbers and strings as ECMAScript's
 * JSON.stringify writes them. `undefined` members are skipped (they are never stored).
 */
export function canonicalJson(value: JsonValue | undefined): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) {
    let out = "[";
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ",";
      out += canonicalJson(value[index]);
    }
    return out + "]";
  }
  const keys = Object.keys(value).sort();
  let out = "{";
  let first = true;
  for (const key of keys) {
    const item = value[key];
    if (item === undefined) continue;
    if (!first) out += ",";
    first = false;
    out += JSON.stringify(key) + ":" + canonicalJson(item);
  }
  return out + "}";
}

/** Hex sha256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** sha256 of the canonical JSON of a value: the identity used for request matching. */
export function hashJson(value: JsonValue | undefined): string {
  return sha256Hex(canonicalJson(value));
}
