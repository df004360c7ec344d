import type { CompactSession } from "../compact/externalize.js";
import {
  assertObjectArgument,
  assertOptions,
  attemptNeeded,
  type KnownKeys,
} from "../events/argument-checks.js";
import { InvalidArgumentError, withAdvice } from "../events/errors.js";
import { assertId } from "../events/ids.js";
import type { JsonObject } from "../events/json.js";
import type { Actor, LedgerEvent, NewEvent } from "../events/types.js";
import { markPrevalidated } from "../store/validate.js";
import { validateActor } from "../store/validate-actor-metadata.js";
import type { Attempt } from "./attempt.js";
import { commitCompacted, commitEvent } from "./commit-event.js";
import { checkOpen } from "./outcome-guard.js";
import {
  callMetadata,
  compactedPayload,
  failurePayload,
  fieldsOf,
  METADATA_ONLY,
  type MetadataOption,
  reasonPayload,
} from "./prepare-payload.js";
import type { RecorderState } from "./recorder-state.js";
import { recordedOutcomeOf } from "./replayed-calls.js";
import { rejectThrown } from "./turns.js";

/**
 * What `abandon` and `approve` name an attempt by: the attempt the recorder handed out (or
 * carried by an `unresolved-attempt` error), or as `inspectSession` reports it (`unresolved`),
 * whose request event is `requestEventId`.
 */
export type AttemptRef = Pick<Attempt, "stepId" | "attemptId"> & { toolCallId?: string } & (
    | { requestedEventId: string }
    | { requestEventId: string }
  );

/** The `*.requested` event an attempt named by `attempt` began with. */
function requestOf(attempt: AttemptRef, doing: string): string {
  const id = "requestedEventId" in attempt ? attempt.requestedEventId : attempt.requestEventId;
  if (typeof id !== "string")
    throw new InvalidArgumentError(
      "$.requestedEventId",
      `${doing} an attempt needs its request event (requestedEventId, or requestEventId as inspectSession lists it): the decision is caused by it`,
    );
  return id;
}

const MODEL_FAILED_OPTIONS: KnownKeys<MetadataOption & { partial?: unknown }> = {
  metadata: true,
  partial: true,
};

/**
 * `make`'s payload of an outcome; its `non-serializable` told with what to do. The value is
 * most often an SDK's object (a class instance, a Date inside), and the call it settles was
 * made and paid for: refused, it stays unresolved, which the bare "not plain JSON" did not say.
 */
function asOutcome<T>(what: string, name: string, make: () => T): T {
  try {
    return make();
  } catch (error) {
    throw withAdvice(
      error,
      `It is ${what}: record a plain JSON copy of it (JSON.parse(JSON.stringify(${name})), or pick the fields you need). Nothing was written: the call was made, and it stays unresolved until its outcome is recorded (call this again with the copy)`,
    );
  }
}

/** `SessionRecorder.modelCompleted`. */
export function completeModelCall(
  state: RecorderState,
  attempt: Attempt,
  response: unknown,
  options: MetadataOption,
): Promise<LedgerEvent> {
  return rejectThrown(() => {
    assertObjectArgument(attempt, "$", attemptNeeded("completing"));
    // `metdata` lost what the caller meant to keep with the outcome.
    assertOptions(options, METADATA_ONLY, "modelCompleted");
    const compact = state.compactor.begin();
    const stored = asOutcome("the model's response", "response", () =>
      compactedPayload(compact, state.redact, {
        type: "model.completed",
        value: response,
        path: "$",
        field: "response",
        text: true,
      }),
    );
    return resolveAttempt(
      state,
      attempt,
      "model.completed",
      { response: stored },
      options.metadata,
      compact,
    );
  });
}

/** `SessionRecorder.modelFailed`. */
export function failModelCall(
  state: RecorderState,
  attempt: Attempt,
  error: unknown,
  options: MetadataOption & { partial?: unknown },
): Promise<LedgerEvent> {
  return rejectThrown(() => {
    assertObjectArgument(attempt, "$", attemptNeeded("failing"));
    assertOptions(options, MODEL_FAILED_OPTIONS, "modelFailed");
    const payload = failurePayload(state.redact, "model.failed", error);
    const compact = state.compactor.begin();
    if (options.partial !== undefined)
      fieldsOf(payload).partial = compactedPayload(compact, state.redact, {
        type: "model.failed",
        value: options.partial,
        path: "$.partial",
        field: "partial",
        text: true,
      });
    return resolveAttempt(state, attempt, "model.failed", payload, options.metadata, compact);
  });
}

/** `SessionRecorder.toolCompleted`. */
export function completeToolCall(
  state: RecorderState,
  attempt: Attempt,
  result: unknown,
  options: MetadataOption,
): Promise<LedgerEvent> {
  return rejectThrown(() => {
    assertObjectArgument(attempt, "$", attemptNeeded("completing"));
    assertOptions(options, METADATA_ONLY, "toolCompleted");
    const compact = state.compactor.begin();
    const payload: JsonObject = {
      result: asOutcome("the tool's result", "result", () =>
        compactedPayload(compact, state.redact, {
          type: "tool.completed",
          value: result,
          path: "$",
          field: "result",
        }),
      ),
    };
    if (attempt.toolCallId !== undefined) {
      // The attempt comes back from the caller: its id enters a prevalidated payload.
      assertId(attempt.toolCallId, "$.toolCallId");
      payload.toolCallId = attempt.toolCallId;
    }
    return resolveAttempt(state, attempt, "tool.completed", payload, options.metadata, compact);
  });
}

/** `SessionRecorder.toolFailed`. */
export function failToolCall(
  state: RecorderState,
  attempt: Attempt,
  error: unknown,
  options: MetadataOption,
): Promise<LedgerEvent> {
  return rejectThrown(() => {
    assertObjectArgument(attempt, "$", attemptNeeded("failing"));
    assertOptions(options, METADATA_ONLY, "toolFailed");
    const payload = failurePayload(state.redact, "tool.failed", error);
    if (attempt.toolCallId !== undefined) fieldsOf(payload).toolCallId = attempt.toolCallId;
    return resolveAttempt(state, attempt, "tool.failed", payload, options.metadata);
  });
}

/** Commits an attempt's outcome, once (see `OpenAttempts.settle`). */
async function resolveAttempt(
  state: RecorderState,
  attempt: Attempt,
  type: NewEvent["type"],
  payload: JsonObject,
  metadata?: JsonObject,
  compact?: CompactSession,
): Promise<LedgerEvent> {
  const recorded = recordedOutcomeOf(attempt);
  // Answered from the ledger: the outcome is already recorded, nothing to write.
  if (recorded) return recorded;
  const event: NewEvent = {
    type,
    stepId: attempt.stepId,
    attemptId: attempt.attemptId,
    causedByEventId: attempt.requestedEventId,
    payload,
  };
  // A completion's payload came through `preparePayload` and the compactor: the recorder's own
  // validated copy (see commitRequest), so it goes prevalidated. A failure's normalised error
  // is checked by the store. Metadata is checked here for both, so a bad value is named by its
  // path in the caller's argument (`$.metadata.when`), not in the store's append request.
  if (metadata !== undefined) event.metadata = callMetadata(metadata);
  if (type === "model.completed" || type === "tool.completed") markPrevalidated(event);
  return await state.open.settle(attempt, type, state.runId, (claim) =>
    compact
      ? commitCompacted(state, event, compact, claim)
      : commitEvent(state, event, undefined, claim),
  );
}

/** `SessionRecorder.abandon`: the attempt's outcome, that it will never complete. */
export async function abandonAttempt(
  state: RecorderState,
  attempt: AttemptRef,
  reason: string,
  options: DecisionOptions = {},
): Promise<LedgerEvent> {
  const event = decision(state, "attempt.abandoned", attempt, reason, "abandoning", options);
  return await state.open.settle(attempt, "attempt.abandoned", state.runId, (claim) =>
    commitEvent(state, event, undefined, claim),
  );
}

/** `SessionRecorder.approve`: not an outcome, the attempt stays open. */
export async function approveAttempt(
  state: RecorderState,
  attempt: AttemptRef,
  reason: string,
  options: DecisionOptions = {},
): Promise<LedgerEvent> {
  const event = decision(state, "attempt.approved", attempt, reason, "approving", options);
  return await commitEvent(state, event, undefined, checkOpen(state.open, attempt, state.runId));
}

/** Who decided (`abandon`, `approve`), when not the recorder's own actor, and the event's metadata. */
export interface DecisionOptions {
  /**
   * The decision's author, recorded as its event's actor: the person an adapter asked (LangGraph's
   * interrupt answered by a user), where the recorder writes as the agent. Default: the
   * recorder's actor.
   */
  actor?: Actor;
  metadata?: JsonObject;
}

export const DECISION_OPTIONS: KnownKeys<DecisionOptions> = { actor: true, metadata: true };

/** The event of what a person or policy decided about an unresolved attempt, and why. */
export function decision(
  state: RecorderState,
  type: "attempt.abandoned" | "attempt.approved",
  attempt: AttemptRef,
  reason: string,
  doing: string,
  options: DecisionOptions,
): NewEvent {
  assertObjectArgument(attempt, "$", attemptNeeded(doing));
  if (typeof reason !== "string" || reason.length === 0)
    throw new InvalidArgumentError("$.reason", `${doing} an attempt needs a reason`);
  const payload: JsonObject = { reason: reasonPayload(state.redact, type, reason) };
  if (attempt.toolCallId !== undefined) payload.toolCallId = attempt.toolCallId;
  // `author` for `actor` recorded a person's decision as the agent's.
  assertOptions(options, DECISION_OPTIONS, type === "attempt.abandoned" ? "abandon" : "approve");
  const event: NewEvent = {
    type,
    stepId: attempt.stepId,
    attemptId: attempt.attemptId,
    causedByEventId: requestOf(attempt, doing),
    payload,
  };
  if (options.actor !== undefined)
    event.actor = validateActor(options.actor, "$.options.actor", "invalid-argument");
  if (options.metadata !== undefined)
    event.metadata = callMetadata(options.metadata, "$.options.metadata");
  return event;
}
