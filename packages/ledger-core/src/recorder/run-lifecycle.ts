import { resolveEvents, resolvePayload } from "../compact/resolve.js";
import { toolCallLabel } from "../decisions/tool-call-end.js";
import { assertOptions } from "../events/argument-checks.js";
import { UnresolvedAttemptError } from "../events/errors.js";
import type { JsonValue } from "../events/json.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import {
  attemptFromRecorded,
  collectAttempts,
  type RecordedAttempt,
} from "../replay/replay-cursor.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { ledgerCommand } from "../store/store-command.js";
import { commitCompacted, commitEvent } from "./commit-event.js";
import {
  callMetadata,
  compactedPayload,
  failurePayload,
  METADATA_ONLY,
  type MetadataOption,
  preparePayload,
  reasonPayload,
} from "./prepare-payload.js";
import { awaitCloseGuards, type RecorderState } from "./recorder-state.js";
import { sameAsRecorded } from "./replayed-calls.js";
import { ABANDON_COMMAND_USE, abandonCommand } from "./resolve-command.js";
import { assertNoneStranded } from "./stranded-calls.js";
import { inTurn } from "./turns.js";

/** `SessionRecorder.startRun`. */
export async function startRun(state: RecorderState, payload: unknown): Promise<LedgerEvent> {
  return inTurn(state, async () => {
    if (state.started && state.startedEvent) return state.startedEvent;
    const compact = state.compactor.begin();
    const event: NewEvent = {
      type: "run.started",
      payload: compactedPayload(compact, state.redact, {
        type: "run.started",
        value: payload ?? {},
        path: "$",
      }),
    };
    if (state.parentRunId !== undefined) event.parentRunId = state.parentRunId;
    if (state.causedByEventId !== undefined) event.causedByEventId = state.causedByEventId;
    state.started = true;
    try {
      const stored = await commitCompacted(state, event, compact);
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
  options: MetadataOption,
): Promise<LedgerEvent> {
  return inTurn(state, async () => {
    assertOptions(options, METADATA_ONLY, "recordInput");
    const metadata = callMetadata(options.metadata);
    const payload = preparePayload(state.redact, "input.received", { input }, "$");
    const recorded = state.replay?.takeInput();
    if (recorded)
      return await sameAsLoaded(state, recorded, payload, { name: "input", built: "An input" });
    const compact = state.compactor.begin();
    return await commitCompacted(
      state,
      {
        type: "input.received",
        payload: compact.value(payload, { text: false }),
        ...(metadata !== undefined ? { metadata } : {}),
      },
      compact,
    );
  });
}

/** `SessionRecorder.completeRun`. */
export async function completeRun(state: RecorderState, output: unknown): Promise<LedgerEvent> {
  const payload = {
    output: preparePayload(state.redact, "run.completed", output ?? null, "$", "output"),
  };
  return closeRun(state, { type: "run.completed", payload }, { compacted: true });
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
/**
 * `compacted`: the event's payload is the run's output as `preparePayload` made it, compared
 * with the recorded one on a re-executed run and compacted only when it is committed.
 */
async function closeRun(
  state: RecorderState,
  event: NewEvent & { payload?: JsonValue },
  options: { compacted: boolean } = { compacted: false },
): Promise<LedgerEvent> {
  return inTurn(state, async () => {
    const recorded = state.recordedEnd;
    if (recorded?.type === event.type)
      return options.compacted
        ? await sameAsLoaded(state, recorded, event.payload ?? null, {
            name: "the run's output",
            built: "An output",
          })
        : recorded;
    await awaitCloseGuards(state, event.type);
    await assertNoneLeftInFlight(state, event.type);
    if (!options.compacted) return await commitEvent(state, event);
    const compact = state.compactor.begin();
    const stored = { ...event, payload: compact.value(event.payload ?? null, { text: false }) };
    return await commitCompacted(state, stored, compact);
  });
}

/**
 * Before an event of `type` is written: for a `run.completed` on a running run,
 * `unresolved-attempt` (nothing written) while the run holds a call a crash left in flight that
 * this recorder loaded on resume (or on reopen) and that is still without an outcome: neither
 * retried nor resolved since. The resumed agent may not have met it, or met it and was refused
 * (a tool call not idempotent), which a framework may report only as a tool error or an error
 * part of its stream. Completed, the run would take no more events and never be resumed, and
 * that call would stay "may or may not have happened" for good: the run stays open for a
 * person to decide (`abandon`, `approve`) and be resumed. A failure or a cancellation still
 * closes it: it says the run did not finish.
 *
 * Calls made in this process and still without an outcome are not refused here: an adapter
 * may end its run with a call its framework requested and then skipped (an approved call the
 * framework answers otherwise), and refusing would stop a run whose work is done. Except those
 * left so by an append whose outcome was unknown, which the caller does not see open
 * (`assertNoneStranded`).
 *
 * The ledger is the truth, as inspection reads it: the run's events once every event this
 * recorder queued is committed (an outcome made just before is counted), an attempt retried by
 * a later one being no longer in flight. A new run holds no such call: nothing is read.
 */
export async function assertNoneLeftInFlight(state: RecorderState, type: string): Promise<void> {
  if (type !== "run.completed" || state.status !== "running") return;
  await assertNoneStranded(state);
  const replay = state.replay;
  if (replay === undefined) return;
  await state.queue.settled();
  const { store, sessionId, runId } = state;
  const attempts = collectAttempts(await readWholeRun(store, { sessionId, runId }));
  const retried = new Set(attempts.map((attempt) => attempt.retryOf));
  // What the replay was made of: the run as loaded (`toolStepOf` knows every tool attempt of
  // it), or, after `replayAgain`, the attempts it selected.
  const loadedModels = new Set(replay.modelAttempts.map((attempt) => attempt.attemptId));
  const loaded = (attempt: RecordedAttempt) =>
    attempt.kind === "model"
      ? loadedModels.has(attempt.attemptId)
      : replay.toolStepOf(attempt.requested.eventId) !== undefined;
  const open = attempts.filter(
    (attempt) =>
      attempt.status === "requested" && !retried.has(attempt.attemptId) && loaded(attempt),
  );
  if (open.length === 0) return;
  // As a resume hands them out: the requests resolved, unless the run is read as stored.
  const requests = open.map((attempt) => attempt.requested);
  const resolved = state.resolveOnLoad ? await resolveEvents(store, requests) : requests;
  throw openAtCompletion(
    store,
    runId,
    open.map((attempt, index) => ({ ...attempt, requested: resolved[index] ?? attempt.requested })),
  );
}

function described(attempt: RecordedAttempt): string {
  const what = attempt.kind === "tool" ? toolCallLabel(attempt) : "model call";
  return `${what} attempt ${attempt.attemptId}`;
}

// The resolve commands a refusal prints at most; inspect prints every one.
const COMMANDS_SHOWN = 3;

/**
 * `unresolved-attempt` for a run completed with calls a crash left in flight. It names the
 * recorder's decisions (on `error.attempt`, the first, or on each as `inspectSession` lists it)
 * and the shell command deciding each call, its store named (`abandonCommand`).
 */
function openAtCompletion(
  store: EventStore,
  runId: string,
  open: RecordedAttempt[],
): UnresolvedAttemptError {
  const first = open[0] as RecordedAttempt;
  const one = open.length === 1;
  const sessionId = first.requested.sessionId;
  const commands = open
    .slice(0, COMMANDS_SHOWN)
    .map((attempt) => abandonCommand(store, { sessionId, attemptId: attempt.attemptId }));
  const others = open.length - commands.length;
  const more =
    others === 0
      ? ""
      : ` and as much for the ${others} other${others === 1 ? "" : "s"} (${ledgerCommand(store, "inspect", [sessionId])} prints each command)`;
  const decide = one
    ? "Check its effect, then abandon it (recorder.abandon(error.attempt, reason)) or approve it (recorder.approve(error.attempt, reason)) and resume the run"
    : "Check the effect of each, then abandon it (recorder.abandon(attempt, reason)) or approve it (recorder.approve(attempt, reason)) and resume the run: error.attempt is the first, inspectSession(store, sessionId).unresolved lists each";
  return new UnresolvedAttemptError(
    `run ${runId} cannot be completed while ${one ? "a call of it has" : `${open.length} calls of it have`} no outcome: ${open.map(described).join(", ")} (left in flight by a crash or by its caller stopping it, and neither run again nor resolved since). ${one ? "It" : "Each"} may or may not have happened, and a completed run takes no more events and is never resumed. Nothing was written: the run stays open. ${decide}; from a shell, ${commands.join(", ")}${more} ${one ? "abandons it" : "abandon them"} ${ABANDON_COMMAND_USE}. Or close the run with failRun or cancelRun.`,
    {
      attemptId: first.attemptId,
      runId,
      unresolved: open.map((attempt) => ({
        attemptId: attempt.attemptId,
        kind: attempt.kind,
        seq: attempt.requested.seq,
        ...(attempt.name !== undefined ? { name: attempt.name } : {}),
        ...(attempt.toolCallId !== undefined ? { toolCallId: attempt.toolCallId } : {}),
      })),
    },
    attemptFromRecorded(first),
  );
}

/**
 * `sameAsRecorded` for a payload the recorder compacts: what a re-executed loop records (as
 * `preparePayload` made it) is compared with the recorded payload resolved. A recorder that
 * loaded its run as stored (`resolve: false`) resolves this one payload to compare: its stored
 * form depends on the `compact` options it was recorded with (and on what went to blobs before
 * it), not only on its content. The recorded event is returned as loaded.
 */
async function sameAsLoaded(
  state: RecorderState,
  recorded: LedgerEvent,
  payload: JsonValue,
  what: { name: string; built: string },
): Promise<LedgerEvent> {
  const seen = state.resolveOnLoad
    ? recorded
    : { ...recorded, payload: await resolvePayload(state.store, recorded.payload) };
  sameAsRecorded(seen, payload, what);
  return recorded;
}
