export type { EvidenceView } from "./evidence.js";
export { latestEvidence, latestEvidenceOf } from "./evidence.js";
export type { CompactedEvent, CompactOptions } from "./externalize.js";
export {
  CompactSession,
  DEFAULT_TEXT_THRESHOLD_BYTES,
  DEFAULT_THRESHOLD_BYTES,
  MESSAGE_LIST_FIELDS,
  PayloadCompactor,
  putCompactedBlobs,
} from "./externalize.js";
export type { BlobMarker, ListNode, MarkerKind } from "./marker.js";
export { asEscape, asMarker, MARKER_KEY, marker } from "./marker.js";
export type { ResolveOptions } from "./resolve.js";
export { BlobCache, lastListOf, resolveEvents, resolvePayload } from "./resolve.js";
