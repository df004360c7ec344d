import type { JsonObject, JsonValue } from "../events/json.js";
import { isBlobRef } from "../store/blob.js";

/**
 * The marker key of externalized content (§8). A payload value is replaced by
 * `{ "$ledger": "text" | "json" | "list", "ref": "sha256:..." }`:
 * - `text`: the blob is a UTF-8 string;
 * - `json`: the blob is the canonical JSON of a value (which may hold markers itself);
 * - `list`: the blob is a list node `{ "items": [appended], "prev": list ref | null }`
 *   (structural sharing: a list is its `prev` list followed by its items; an item is a
 *   message blob ref, or a small message inline, see `ListNode`).
 * A user object that has a `$ledger` key of its own is stored as
 * `{ "$ledger": "escape", "value": { ...the object } }`, so reads never mistake it for a marker.
 */
export const MARKER_KEY = "$ledger";

export type MarkerKind = "text" | "json" | "list";

export interface BlobMarker {
  [MARKER_KEY]: MarkerKind;
  ref: string;
}

/**
 * A list node blob: the previous list (or null for a root) and the items it appends: a string
 * is the ref of a message blob; an object or array is a small message kept inline (with its
 * long strings already externalized).
 */
export interface ListNode {
  prev: string | null;
  items: JsonValue[];
}

export function marker(kind: MarkerKind, ref: string): JsonObject {
  return { [MARKER_KEY]: kind, ref };
}

/** The marker in `value`, if it is exactly one. */
export function asMarker(value: JsonValue): BlobMarker | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  const kind = value[MARKER_KEY];
  if (kind !== "text" && kind !== "json" && kind !== "list") return undefined;
  if (!isBlobRef(value.ref)) return undefined;
  return value as unknown as BlobMarker;
}

/**
 * `object` (a user object with a `$ledger` key of its own, its fields already in stored form)
 * as stored: `{ "$ledger": "escape", "value": object }`. The one way the ledger writes an escape,
 * undone by `asEscape` on every read.
 */
export function escapeObject(object: JsonObject): JsonObject {
  return { [MARKER_KEY]: "escape", value: object };
}

/**
 * A user value as the ledger stores it when nothing of it goes to a blob: every object with a
 * `$ledger` key of its own escaped (`escapeObject`), so a read gives it back as it was instead
 * of the blob it seems to name. What the recorder writes that the compactor does not walk
 * (failures, reasons) goes through here: the compactor escapes the same way as it walks.
 * Returns `value` itself when it holds no such object (the common case costs a walk, never a
 * copy); otherwise copies only the changed paths.
 */
export function escapeMarkers(value: JsonValue): JsonValue {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    let copy: JsonValue[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item = value[index] as JsonValue;
      const escaped = escapeMarkers(item);
      if (escaped !== item) {
        copy ??= value.slice();
        copy[index] = escaped;
      }
    }
    return copy ?? value;
  }
  let copy: JsonObject | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key] as JsonValue;
    const escaped = escapeMarkers(item);
    if (escaped !== item) {
      copy ??= { ...value };
      setOwn(copy, key, escaped);
    }
  }
  const out = copy ?? value;
  return Object.hasOwn(value, MARKER_KEY) ? escapeObject(out) : out;
}

/**
 * `object[key] = value` as an own data property, also for the key `__proto__` (which as an
 * assignment would change the object's prototype and drop the key).
 */
export function setOwn(object: JsonObject, key: string, value: JsonValue): void {
  if (key === "__proto__")
    Object.defineProperty(object, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  else object[key] = value;
}

/** The escaped object inside `{ "$ledger": "escape", "value": {...} }`. */
export function asEscape(value: JsonValue): JsonObject | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  if (value[MARKER_KEY] !== "escape") return undefined;
  const inner = value.value;
  if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return undefined;
  return inner;
}
