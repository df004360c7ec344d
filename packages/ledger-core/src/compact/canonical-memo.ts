import { canonicalJson, jsonString } from "../events/canonical.js";
import type { JsonValue } from "../events/json.js";

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
  readonly #stringJson = (value: string): string => {
    if (value.length < MEMO_MIN_LENGTH) return jsonString(value);
    let json = this.#strings.get(value);
    if (json === undefined) {
      json = JSON.stringify(value);
      if (this.#strings.size >= MAX_MEMO) this.#strings.clear();
      this.#strings.set(value, json);
    }
    return json;
  };

  json(value: JsonValue | undefined): string {
    return canonicalJson(value, this.#stringJson);
  }
}
