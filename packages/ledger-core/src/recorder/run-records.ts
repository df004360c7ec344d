import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError, NotFoundError } from "../events/errors.js";
import { assertId } from "../events/ids.js";
import type { JsonObject } from "../events/json.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import { isBlobRef } from "../store/blob.js";
import type { EventStore } from "../store/event-store.js";
import { validateActor, validateMetadata } from "../store/validate-actor-metadata.js";
import { answeredByClosedRun } from "./closed-run-records.js";
import { commitCompacted, commitEvent } from "./commit-event.js";
import { isOutcomeType, outcomeKind } from "./outcome-guard.js";
import {
  callMetadata,
  compactedPayload,
  METADATA_ONLY,
  type MetadataOption,
} from "./prepare-payload.js";
import { awaitCloseGuards, type RecorderState } from "./recorder-state.js";
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
  // A copy: the caller's object is theirs (commitEvent completes its event in place).
  const copy = { ...event };
  // Checked before the recorder's metadata is merged in, where a string would be spread into
  // `{ "0": ... }` keys; at the event's own paths, as its payload is (`$.payload`).
  if (copy.metadata !== undefined) copy.metadata = validateMetadata(copy.metadata, "$.metadata");
  if (copy.actor !== undefined) copy.actor = validateActor(copy.actor, "$.actor");
  // Redacted and compacted as every other payload this recorder writes: an adapter's custom
  // events carry the user's data too (LangChain's chain inputs and outputs).
  const compact = state.compactor.begin();
  if (copy.payload !== undefined)
    copy.payload = compactedPayload(compact, state.redact, {
      type: copy.type,
      value: copy.payload,
      path: "$.payload",
    });
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
