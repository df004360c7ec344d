import { escapeMarkers } from "../compact/marker.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import { commitEvent } from "./commit-event.js";
import {
  escapedPayload,
  failurePayload,
  preparePayload,
  reasonPayload,
} from "./prepare-payload.js";
import type { RecorderState } from "./recorder-state.js";
import { sameAsRecorded } from "./replayed-calls.js";
import { inTurn } from "./turns.js";

/** `SessionRecorder.startRun`. */
export async function startRun(state: RecorderState, payload: unknown): Promise<LedgerEvent> {
  return inTurn(state, async () => {
    if (state.started && state.startedEvent) return state.startedEvent;
    const event: NewEvent = {
      type: "run.started",
      payload: escapedPayload(state.redact, "run.started", payload ?? {}, "$"),
    };
    if (state.parentRunId !== undefined) event.parentRunId = state.parentRunId;
    if (state.causedByEventId !== undefined) event.causedByEventId = state.causedByEventId;
    state.started = true;
    try {
      const stored = await commitEvent(state, event);
      state.startedEvent = stored;
      return stored;
    } catch (error) {
      state.started = false;
      throw error;
    }
  });
}

/** `SessionRecorder.recordInput`. */
export async function recordInput(
  state: RecorderState,
  input: unknown,
  options: { metadata?: JsonObject },
): Promise<LedgerEvent> {
  return inTurn(state, async () => {
    const payload = preparePayload(state.redact, "input.received", { input }, "$");
    const escaped = escapeMarkers(payload);
    const recorded = state.replay?.takeInput();
    if (recorded) return sameAsRecorded(recorded, asLoaded(state, payload, escaped), "input");
    return await commitEvent(state, {
      type: "input.received",
      payload: escaped,
      ...(options.metadata ? { metadata: options.metadata } : {}),
    });
  });
}

/** `SessionRecorder.completeRun`. */
export async function completeRun(state: RecorderState, output: unknown): Promise<LedgerEvent> {
  const payload = {
    output: preparePayload(state.redact, "run.completed", output ?? null, "$", "output"),
  };
  const escaped = escapeMarkers(payload);
  return closeRun(
    state,
    { type: "run.completed", payload: escaped },
    asLoaded(state, payload, escaped),
  );
}

/** `SessionRecorder.failRun`. */
export async function failRun(state: RecorderState, error: unknown): Promise<LedgerEvent> {
  return closeRun(state, {
    type: "run.failed",
    payload: failurePayload(state.redact, "run.failed", error),
  });
}

/** `SessionRecorder.cancelRun`. */
export async function cancelRun(
  state: RecorderState,
  reason: string | undefined,
): Promise<LedgerEvent> {
  return closeRun(state, {
    type: "run.cancelled",
    payload:
      reason === undefined ? {} : { reason: reasonPayload(state.redact, "run.cancelled", reason) },
  });
}

// A re-executed loop closes its run (or a child's) again, as it did before the crash: like
// startRun, that answers from the ledger. Closing it another way is still `run-closed`. A
// completion is checked like a recorded input: other output than the recorded one means the
// loop did not re-execute the same run (`replay-divergence`). A failure or cancellation is
// not: its stack or reason may name a time or a process.
async function closeRun(
  state: RecorderState,
  event: NewEvent,
  output?: JsonValue,
): Promise<LedgerEvent> {
  return inTurn(state, async () => {
    const recorded = state.recordedEnd;
    if (recorded?.type === event.type)
      return event.type === "run.completed"
        ? sameAsRecorded(recorded, output, "the run's output")
        : recorded;
    return await commitEvent(state, event);
  });
}

/**
 * A payload as this recorder loaded the run's events: resolved (escaped objects given back),
 * or as stored with `resolve: false`. What a re-executed loop records is compared with the
 * recorded event in that form.
 */
function asLoaded(state: RecorderState, payload: JsonValue, escaped: JsonValue): JsonValue {
  return state.resolveOnLoad ? payload : escaped;
}
