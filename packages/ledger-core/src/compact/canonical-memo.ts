import type { JsonValue } from "../events/json.js";

const plainKey = /^[A-Za-z0-9_$.-]*$/;
const MEMO_MIN_LENGTH = 256;
const MAX_MEMO = 50_000;

/**
 * `canonicalJson` (RFC 8785, events/canonical.ts) with the JSON form of long strings
 * memoized: a conversation re-sends the same message texts every turn, and escaping them
 * again is most of the cost of hashing a long request. The output is byte-for-byte the same
 * as `canonicalJson` (a test checks it), so `requestHash` keeps its meaning.
 */
export class CanonicalJsonMemo {
  readonly #strings = new Map<string, string>();

  json(value: JsonValue | undefined): string {
    if (typeof value === "string") {
      if (value.length < MEMO_MIN_LENGTH) return JSON.stringify(value);
      let json = this.#strings.get(value);
      if (json === undefined) {
        json = JSON.stringify(value);
        if (this.#strings.size >= MAX_MEMO) this.#strings.clear();
        this.#strings.set(value, json);
      }
      return json;
    }
    if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
    if (Array.isArray(value)) {
      let out = "[";
      for (let index = 0; index < value.length; index++) {
        if (index > 0) out += ",";
        out += this.json(value[index]);
      }
      return `${out}]`;
    }
    const keys = Object.keys(value);
    if (keys.length > 1) keys.sort();
    let out = "{";
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string;
      const item = value[key];
      if (item === undefined) continue;
      if (out.length > 1) out += ",";
      out += `${plainKey.test(key) ? `"${key}"` : JSON.stringify(key)}:${this.json(item)}`;
    }
    return `${out}}`;
  }
}
