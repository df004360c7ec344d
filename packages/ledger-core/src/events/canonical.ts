import * as crypto from "node:crypto";
import type { JsonValue } from "./json.js";

/**
 * RFC 8785 (JSON Canonicalization Scheme) serialisation of a plain JSON value: object keys
 * sorted by UTF-16 code units, no whitespace, numbers and strings as ECMAScript's
 * JSON.stringify writes them. `undefined` members are skipped (they are never stored).
 * `stringJson` writes string values (default JSON.stringify); a caller may pass a memoized
 * one as long as it returns the same text.
 */
export function canonicalJson(
  value: JsonValue | undefined,
  stringJson: (text: string) => string = jsonString,
): string {
  // Numbers, booleans and null as JSON.stringify writes them, without entering it: a finite
  // number's JSON is its String form (-0 included, "0"), and a ledger's values are finite.
  switch (typeof value) {
    case "string":
      return stringJson(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "object":
      if (value === null) return "null";
      break;
    default:
      return JSON.stringify(value) ?? "null";
  }
  if (Array.isArray(value)) {
    let out = "[";
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ",";
      out += canonicalJson(value[index], stringJson);
    }
    return out + "]";
  }
  const keys = Object.keys(value);
  sortKeys(keys);
  let out = "{";
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index] as string;
    const item = value[key];
    if (item === undefined) continue;
    if (out.length > 1) out += ",";
    out += keyJson(key) + canonicalJson(item, stringJson);
  }
  return out + "}";
}

/** Up to this many keys an insertion sort beats Array.prototype.sort's setup. */
const INSERTION_SORT_KEYS = 16;

/**
 * Sorts an object's keys in place as `keys.sort()` does (by UTF-16 code units; keys are
 * distinct, so any correct sort gives the same order). A payload's objects have a few keys,
 * often out of order ({ role, content }, { model, messages }), and `sort()` took 40% of the
 * time of canonicalising a model request; objects built in key order cost one compare per key.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > INSERTION_SORT_KEYS) {
    for (let index = 1; index < keys.length; index++) {
      if ((keys[index - 1] as string) > (keys[index] as string)) {
        keys.sort();
        return;
      }
    }
    return;
  }
  for (let index = 1; index < keys.length; index++) {
    const key = keys[index] as string;
    let at = index - 1;
    if ((keys[at] as string) <= key) continue;
    do {
      keys[at + 1] = keys[at] as string;
      at--;
    } while (at >= 0 && (keys[at] as string) > key);
    keys[at + 1] = key;
  }
}

// Nothing JSON.stringify escapes: no quote, backslash, control character or surrogate (a lone
// one is escaped; a paired one is not, but is left to JSON.stringify to decide).
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it excludes
const plainString = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * A string as JSON.stringify writes it, byte for byte. Most strings in an event (ids, times,
 * type names, short texts) need no escape, and quoting them directly takes half the time of
 * JSON.stringify's general path, which an event's hash takes a dozen times.
 */
export function jsonString(text: string): string {
  return plainString.test(text) ? `"${text}"` : JSON.stringify(text);
}

// Keys that JSON.stringify would write unchanged between quotes.
const plainKey = /^[A-Za-z0-9_$.-]*$/;
const MAX_KEYS = 10_000;
const keys = new Map<string, string>();

/**
 * `"key":` as JSON writes it. Payloads repeat a small vocabulary of keys (role, content, type,
 * ...), so the written form is remembered (bounded: a flood of distinct keys only stops adding).
 */
function keyJson(key: string): string {
  let json = keys.get(key);
  if (json === undefined) {
    json = `${plainKey.test(key) ? `"${key}"` : JSON.stringify(key)}:`;
    if (keys.size < MAX_KEYS) keys.set(key, json);
  }
  return json;
}

// crypto.hash (Node >= 20.12) is a one-shot digest, about twice as fast as createHash.
const oneShot = (
  crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string }
).hash;

/** Hex sha256 of a string (UTF-8) or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  if (oneShot) return oneShot("sha256", data, "hex");
  return crypto.createHash("sha256").update(data).digest("hex");
}

/** sha256 of the canonical JSON of a value: the identity used for request matching. */
export function hashJson(value: JsonValue | undefined): string {
  return sha256Hex(canonicalJson(value));
}
