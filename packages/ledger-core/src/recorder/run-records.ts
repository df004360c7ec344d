import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError, NotFoundError } from "../events/errors.js";
import { assertId } from "../events/ids.js";
import type { JsonObject } from "../events/json.js";
import type { EventType, LedgerEvent, NewEvent } from "../events/types.js";
import { isBlobRef } from "../store/blob.js";
import type { EventStore } from "../store/event-store.js";
import { validateActor, validateMetadata } from "../store/validate-actor-metadata.js";
import { answeredByClosedRun } from "./closed-run-records.js";
import {
  type CompactedRecord,
  commitAllCompacted,
  commitCompacted,
  commitEvent,
  ofListedEvent,
} from "./commit-event.js";
import { isOutcomeType, outcomeKind } from "./outcome-guard.js";
import {
  callMetadata,
  compactedPayload,
  METADATA_ONLY,
  type MetadataOption,
} from "./prepare-payload.js";
import { awaitCloseGuards, type RecorderState, runEndStatus } from "./recorder-state.js";
import { assertNoneLeftInFlight } from "./run-lifecycle.js";
import { inTurn } from "./turns.js";

export interface EvidenceRecord {
  /** Domain key: a later record with the same key supersedes this one in `latestEvidence`. */
  key?: string;
  classification: string;
  summary: string;
  evidenceRefs: string[];
}

const EVIDENCE_KEYS: KnownKeys<EvidenceRecord> = {
  key: true,
  classification: true,
  summary: true,
  evidenceRefs: true,
};

/** `SessionRecorder.checkpoint`. */
export async function checkpoint(
  state: RecorderState,
  value: unknown,
  options: MetadataOption,
): Promise<LedgerEvent> {
  assertOptions(options, METADATA_ONLY, "checkpoint");
  const metadata = callMetadata(options.metadata);
  // In its turn: a child of a resumed run knows whether its run was closed once it is loaded.
  return inTurn(state, async () => {
    const answered = answeredByClosedRun(state, "checkpoint.saved");
    if (answered !== undefined) return answered;
    // A checkpoint is often a whole serialized framework state (an OpenAI Agents RunState at
    // every interruption): over the threshold, it goes to a blob as a call's payload does.
    const compact = state.compactor.begin();
    const event: NewEvent = {
      type: "checkpoint.saved",
      payload: compactedPayload(compact, state.redact, {
        type: "checkpoint.saved",
        value,
        path: "$",
      }),
    };
    if (metadata !== undefined) event.metadata = metadata;
    return await commitCompacted(state, event, compact);
  });
}

/** `SessionRecorder.recordEvidence`. */
export async function recordEvidence(
  state: RecorderState,
  record: EvidenceRecord,
): Promise<LedgerEvent> {
  // `keys` for `key` wrote a record that supersedes nothing, without a word.
  assertOptions(record, EVIDENCE_KEYS, "recordEvidence", { at: "$" });
  if (record.key !== undefined) assertId(record.key, "$.key");
  if (typeof record.classification !== "string" || record.classification.length === 0) {
    throw new InvalidArgumentError("$.classification", "classification must be a non-empty string");
  }
  if (typeof record.summary !== "string")
    throw new InvalidArgumentError("$.summary", "summary must be a string");
  if (!Array.isArray(record.evidenceRefs))
    throw new InvalidArgumentError(
      "$.evidenceRefs",
      "evidenceRefs must be an array of sha256: references",
    );
  record.evidenceRefs.forEach((ref, index) => {
    if (!isBlobRef(ref))
      throw new InvalidArgumentError(
        `$.evidenceRefs[${index}]`,
        "a reference must be sha256:<64 hex>",
      );
  });
  const answered = await inTurn(state, async () => answeredByClosedRun(state, "evidence.recorded"));
  if (answered !== undefined) return answered;
  // Evidence must point at something: every ref must be a stored blob.
  const refs = [...new Set(record.evidenceRefs)];
  if (refs.length > 0) await assertBlobsStored(state.store, refs);
  const payload: JsonObject = {
    classification: record.classification,
    summary: record.summary,
    evidenceRefs: [...record.evidenceRefs],
  };
  if (record.key !== undefined) payload.key = record.key;
  return await commitEvent(state, {
    type: "evidence.recorded",
    payload,
    evidenceRefs: [...record.evidenceRefs],
  });
}

/** `not-found` unless every one of `refs` (no duplicates) is a stored blob. */
async function assertBlobsStored(store: EventStore, refs: string[]): Promise<void> {
  const found = store.getBlobs
    ? await store.getBlobs(refs)
    : new Map(await Promise.all(refs.map(async (ref) => [ref, await store.getBlob(ref)] as const)));
  const missing = refs.find((ref) => !found.has(ref));
  if (missing !== undefined)
    throw new NotFoundError(`evidence blob ${missing} is not in the store (putBlob it first)`, {
      ref: missing,
    });
}

/** `SessionRecorder.record`: a custom event, or any other type, with the caller's payload. */
export async function recordEvent(state: RecorderState, event: NewEvent): Promise<LedgerEvent> {
  const { event: copy, compact } = preparedRecord(state, event, "$");
  // An outcome written this way is one outcome too: it claims its attempt as modelCompleted
  // or abandon would, and a request opens its attempt for one.
  if (isOutcomeType(copy.type)) {
    const attempt = {
      attemptId: copy.attemptId,
      kind: outcomeKind(copy.type),
      runId: state.runId,
    };
    return await state.open.settle(attempt, copy.type, state.runId, (claim) =>
      commitCompacted(state, copy, compact, claim),
    );
  }
  // A completion written this way closes the run as completeRun does: after the close guards,
  // and refused alike while a call a crash left in flight has no outcome.
  await awaitCloseGuards(state, copy.type);
  await assertNoneLeftInFlight(state, copy.type);
  const stored = await commitCompacted(state, copy, compact);
  state.open.read(stored);
  return stored;
}

const RECORD_ALL_KEYS: KnownKeys<{ events: NewEvent[] }> = { events: true };

/**
 * `SessionRecorder.recordAll`: the events of `record`, every one prepared before any is queued,
 * then committed as one entry of the queue (one append, all or none). An outcome or a run's end
 * is refused: each is one call's own decision, which `record` makes alone (an attempt's claim,
 * the close guards).
 */
export async function recordEvents(
  state: RecorderState,
  options: { events: readonly NewEvent[] },
): Promise<LedgerEvent[]> {
  assertOptions(options, RECORD_ALL_KEYS, "recordAll", { at: "$" });
  const { events } = options;
  if (!Array.isArray(events))
    throw new InvalidArgumentError("$.events", "recordAll takes { events: [...] }, an array");
  const records: CompactedRecord[] = [];
  // An indexed loop, not map: a hole in a sparse array is refused, not skipped.
  for (let index = 0; index < events.length; index++) {
    const at = `$.events[${index}]`;
    const event: unknown = events[index];
    if (typeof event !== "object" || event === null || Array.isArray(event))
      throw new InvalidArgumentError(at, "an event must be an object ({ type, payload, ... })");
    assertRecordedAlone((event as NewEvent).type, `${at}.type`);
    try {
      records.push(preparedRecord(state, event as NewEvent, at));
    } catch (error) {
      throw ofListedEvent(error, index, events.length);
    }
  }
  if (records.length === 0) return [];
  const stored = await commitAllCompacted(state, records);
  for (const event of stored) state.open.read(event);
  return stored;
}

/**
 * `invalid-argument` at `path` for an event type `recordAll` does not take: an outcome claims
 * its attempt, and a run's end waits for the close guards, each as `record` writes it alone.
 */
function assertRecordedAlone(type: unknown, path: string): void {
  if (typeof type !== "string") return;
  if (isOutcomeType(type))
    throw new InvalidArgumentError(
      path,
      `recordAll does not take an outcome (${type}): it settles its attempt, which one call does alone; record it with record(), or with the call of its kind (toolCompleted, abandon...)`,
    );
  if (runEndStatus(type as EventType) !== undefined)
    throw new InvalidArgumentError(
      path,
      `recordAll does not take a run's end (${type}): close the run with completeRun, failRun or cancelRun (or record()) after the events before it`,
    );
}

/**
 * A copy of an event given to `record` (its fields at `at`: `$`, or `$.events[2]` in a list),
 * ready to commit: its metadata and actor checked, its payload redacted and compacted as every
 * other payload this recorder writes (an adapter's custom events carry the user's data too:
 * LangChain's chain inputs and outputs).
 */
function preparedRecord(state: RecorderState, event: NewEvent, at: string): CompactedRecord {
  // A copy: the caller's object is theirs (commitEvent completes its event in place).
  const copy = { ...event };
  // Checked before the recorder's metadata is merged in, where a string would be spread into
  // `{ "0": ... }` keys; at the event's own paths, as its payload is (`$.payload`).
  if (copy.metadata !== undefined)
    copy.metadata = validateMetadata(copy.metadata, `${at}.metadata`);
  if (copy.actor !== undefined) copy.actor = validateActor(copy.actor, `${at}.actor`);
  const compact = state.compactor.begin();
  if (copy.payload !== undefined)
    copy.payload = compactedPayload(compact, state.redact, {
      type: copy.type,
      value: copy.payload,
      path: `${at}.payload`,
    });
  return { event: copy, compact };
}
