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

/** The escaped object inside `{ "$ledger": "escape", "value": {...} }`. */
export function asEscape(value: JsonValue): JsonObject | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return undefined;
  if (value[MARKER_KEY] !== "escape") return undefined;
  const inner = value.value;
  if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return undefined;
  return inner;
}
