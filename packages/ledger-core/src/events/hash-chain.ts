import { canonicalJson, sha256Hex } from "./canonical.js";
import type { JsonValue } from "./json.js";
import type { LedgerEvent } from "./types.js";

/** The fields an event's hash covers: all but `hash` itself and `commitCursor`. */
export function hashedContent(
  event: Omit<LedgerEvent, "hash" | "commitCursor"> & { hash?: string; commitCursor?: number },
): JsonValue {
  const { hash: _hash, commitCursor: _cursor, ...rest } = event;
  return rest as unknown as JsonValue;
}

/** sha256 of an event's canonical JSON (without `hash` and `commitCursor`). */
export function computeEventHash(
  event: Omit<LedgerEvent, "hash" | "commitCursor"> & { hash?: string; commitCursor?: number },
): string {
  return sha256Hex(canonicalJson(hashedContent(event)));
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
