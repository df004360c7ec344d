import { canonicalJson, jsonString, sha256Hex } from "./canonical.js";
import type { JsonValue } from "./json.js";
import type { LedgerEvent } from "./types.js";

/** The fields an event's hash covers: all but `hash` itself and `commitCursor`. */
export function hashedContent(
  event: Omit<LedgerEvent, "hash" | "commitCursor"> & { hash?: string; commitCursor?: number },
): JsonValue {
  const { hash: _hash, commitCursor: _cursor, ...rest } = event;
  return rest as unknown as JsonValue;
}

// Envelope keys in RFC 8785 order (UTF-16 code units), without `hash` and `commitCursor`.
const ENVELOPE_KEYS = [
  "actor",
  "attemptId",
  "causedByEventId",
  "eventId",
  "evidenceRefs",
  "metadata",
  "parentRunId",
  "payload",
  "prevHash",
  "recordedAt",
  "retryOf",
  "runId",
  "schemaVersion",
  "seq",
  "sessionId",
  "stepId",
  "type",
] as const;
const HASHED_KEYS: ReadonlySet<string> = new Set([...ENVELOPE_KEYS, "hash", "commitCursor"]);

/** sha256 of an event's canonical JSON (without `hash` and `commitCursor`). */
export function computeEventHash(
  event: Omit<LedgerEvent, "hash" | "commitCursor"> & { hash?: string; commitCursor?: number },
): string {
  // Fast path: the envelope's keys are known and pre-sorted, so only the values need
  // canonicalising. An event with any other key (a row someone edited) takes the general path.
  const record = event as unknown as Record<string, JsonValue | undefined>;
  for (const key in record) {
    if (!HASHED_KEYS.has(key)) return sha256Hex(canonicalJson(hashedContent(event)));
  }
  return envelopeHash(record);
}

/**
 * `computeEventHash` of an event the store has just built from the envelope's fields
 * (buildEvent): no other key can be there, so the scan for one is skipped.
 */
export function plannedEventHash(event: Omit<LedgerEvent, "hash" | "commitCursor">): string {
  return envelopeHash(event as unknown as Record<string, JsonValue | undefined>);
}

function envelopeHash(record: Record<string, JsonValue | undefined>): string {
  let out = "{";
  for (const key of ENVELOPE_KEYS) {
    const value = record[key];
    if (value === undefined) continue;
    if (out.length > 1) out += ",";
    // Most envelope values are ids and times: strings, written as JSON writes them.
    out += `"${key}":${typeof value === "string" ? jsonString(value) : canonicalJson(value)}`;
  }
  return sha256Hex(out + "}");
}

/** The fields a retry must repeat exactly for `append` to treat it as the same event. */
export function writerContent(
  event: Pick<LedgerEvent, "eventId" | "type" | "payload"> & Partial<LedgerEvent>,
): string {
  return canonicalJson({
    eventId: event.eventId,
    type: event.type,
    stepId: event.stepId,
    attemptId: event.attemptId,
    retryOf: event.retryOf,
    parentRunId: event.parentRunId,
    causedByEventId: event.causedByEventId,
    actor: event.actor as unknown as JsonValue,
    payload: event.payload,
    evidenceRefs: event.evidenceRefs,
    metadata: event.metadata,
  } as { [key: string]: JsonValue });
}
