import {
  type Attempt,
  attemptFromRecorded,
  collectAttempts,
  type EventStore,
  type JsonObject,
  type LedgerEvent,
  type Redaction,
  SessionRecorder,
} from "@agent-ledger/core";
import { CONTEXT_CHANGED_EVENT_TYPE, recordedContextChange } from "./context-changes.js";
import { noteLocalCalls } from "./local-call-ids.js";
import {
  agentActor,
  type LedgerRunState,
  type LedgerScope,
  type RecordedToolCall,
} from "./scope.js";
import { qualifiedCallName } from "./tool-call-names.js";

/** Type of the custom event recording a person's decision on an approval interruption. */
export const APPROVAL_EVENT_TYPE = "x.openai-agents.approval";

/**
 * Type of the custom event recording that the agent run behind a tool call (Agent.asTool)
 * paused at an approval: the call's attempt stays open until the run goes on.
 */
export const AGENT_TOOL_PAUSED_EVENT_TYPE = "x.openai-agents.agent-tool-paused";

/**
 * Metadata of a `tool.completed` whose tool returned undefined. JSON has no undefined, so the
 * result is recorded as null; the SDK shows the model `String(undefined)`, so replay must hand
 * back undefined, not null, for the re-executed run to send the model the same request (read
 * from the replayed outcome's metadata).
 */
export const UNDEFINED_OUTPUT_METADATA = { toolOutput: "undefined" } as const;

const CALL_TYPES = new Set([
  "model.requested",
  "model.completed",
  "model.failed",
  "tool.requested",
  "tool.completed",
  "tool.failed",
  "attempt.abandoned",
]);

export function isCallEvent(event: LedgerEvent): boolean {
  return CALL_TYPES.has(event.type);
}

/** The run and every run below it (handoffs, agents as tools), from run.started parentRunId. */
export function runTree(events: readonly LedgerEvent[], rootRunId: string): Set<string> {
  const tree = new Set([rootRunId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const event of events) {
      if (event.type !== "run.started" || tree.has(event.runId)) continue;
      if (event.parentRunId !== undefined && tree.has(event.parentRunId)) {
        tree.add(event.runId);
        grew = true;
      }
    }
  }
  return tree;
}

/** What the ledger knows of every tool call (latest attempt per callId) and every decision. */
export function loadRunState(events: readonly LedgerEvent[]): LedgerRunState {
  const state: LedgerRunState = {
    recordedToolCalls: new Map<string, RecordedToolCall[]>(),
    recordedToolNames: new Set(),
    callCauses: new Map(),
    replayedCompletions: new Set(),
    replayApprovals: new Set(),
    decisions: new Map(),
    permanentDecisions: new Map(),
    rejectionMessages: new Map(),
    approvedRetries: new Map(),
    pausedAgentTools: new Map(),
    safeAgentCalls: new Set(),
    pausedAgentRuns: new Map(),
    contextChanges: new Map(),
  };
  const pausedAttempts = new Set<string>();
  const byRun = new Map<string, LedgerEvent[]>();
  for (const event of events) {
    const list = byRun.get(event.runId) ?? [];
    list.push(event);
    byRun.set(event.runId, list);
    if (event.type === AGENT_TOOL_PAUSED_EVENT_TYPE && event.attemptId !== undefined)
      pausedAttempts.add(event.attemptId);
    if (event.type === CONTEXT_CHANGED_EVENT_TYPE && event.attemptId !== undefined) {
      const change = recordedContextChange(event.payload);
      if (change) state.contextChanges.set(event.attemptId, change);
    }
    if (event.type === APPROVAL_EVENT_TYPE) {
      const payload = event.payload as JsonObject;
      const key =
        typeof payload.attemptId === "string"
          ? payload.attemptId
          : `call:${String(payload.callId)}`;
      state.decisions.set(key, payload.approved === true);
      if (payload.always === true && typeof payload.toolName === "string")
        state.permanentDecisions.set(payload.toolName, {
          approved: payload.approved === true,
          ...(typeof payload.message === "string" ? { message: payload.message } : {}),
        });
      if (payload.approved !== true && typeof payload.message === "string")
        state.rejectionMessages.set(key, payload.message);
    }
  }
  for (const runEvents of byRun.values()) {
    for (const attempt of collectAttempts(runEvents)) {
      if (attempt.kind !== "tool" || attempt.toolCallId === undefined) continue;
      // Attempts come in request order: the last one of a call (a callId asked for by one model
      // completion; a retry keeps the cause) is its current state.
      const cause = attempt.requested.causedByEventId;
      const calls = state.recordedToolCalls.get(attempt.toolCallId) ?? [];
      const call: RecordedToolCall = {
        attemptId: attempt.attemptId,
        status: attempt.status,
        causedByEventId: cause,
        name: attempt.name,
      };
      const reason = (attempt.outcome?.payload as JsonObject | undefined)?.reason;
      if (attempt.status === "abandoned" && typeof reason === "string") call.abandonReason = reason;
      const same = calls.findIndex((recorded) => recorded.causedByEventId === cause);
      if (same === -1) calls.push(call);
      else calls[same] = call;
      state.recordedToolCalls.set(attempt.toolCallId, calls);
      if (attempt.name !== undefined) state.recordedToolNames.add(attempt.name);
      // A person approved a re-run outside the SDK (`agent-ledger resolve --approve`): the
      // interruption it would raise is answered from the ledger, like a decision made in the SDK.
      if (
        attempt.status === "requested" &&
        attempt.approved &&
        !state.decisions.has(attempt.attemptId)
      )
        state.decisions.set(attempt.attemptId, true);
      if (attempt.status === "requested" && pausedAttempts.has(attempt.attemptId))
        state.pausedAgentTools.set(attempt.toolCallId, attemptFromRecorded(attempt));
      else state.pausedAgentTools.delete(attempt.toolCallId);
    }
  }
  return state;
}

/**
 * What the ledger holds of the tool call `callId` the run is making now: the call the model
 * completion that asked for it (see `callCauses`) asked for, else the latest call of that id.
 * Undefined when the call is not recorded.
 */
export function recordedCall(run: LedgerRunState, callId: string): RecordedToolCall | undefined {
  const calls = run.recordedToolCalls.get(callId);
  if (!calls) return undefined;
  const cause = run.callCauses.get(callId);
  if (cause === undefined) return calls.at(-1);
  return calls.find((call) => call.causedByEventId === cause);
}

/**
 * The retry a person approved for the call `callId` the run is making now on `recorder`,
 * recorded as the tool is about to run, or undefined. Only for the call the approval was for: a
 * call of a later turn that reuses its id (call_0 on every turn) is a call of its own (see
 * `recordedCall`).
 */
export function takeApprovedRetry(
  run: LedgerRunState,
  call: { callId: string; recorder: SessionRecorder },
): Promise<Attempt> | undefined {
  const approved = run.approvedRetries.get(call.callId);
  if (approved === undefined || recordedCall(run, call.callId)?.attemptId !== approved.attemptId)
    return undefined;
  run.approvedRetries.delete(call.callId);
  return approved.retry(call.recorder);
}

/**
 * Notes which model completion asked for each call of a response (see `recordedCall`), whether
 * it came from the ledger, the function calls the scope's tools are about to run, and the id of
 * each shell or apply-patch call (`noteLocalCalls`).
 */
export function noteCallCauses(
  scope: LedgerScope,
  output: readonly unknown[],
  completion: { eventId: string; replayed: boolean },
): void {
  const { run } = scope;
  const turnCalls: { callId: string; name: string }[] = [];
  for (const item of output) {
    const call = item as {
      type?: unknown;
      callId?: unknown;
      name?: unknown;
      namespace?: unknown;
    } | null;
    if (typeof call?.callId !== "string") continue;
    run.callCauses.set(call.callId, completion.eventId);
    // Named as its tool's calls are recorded: in its namespace (tool-call-names.ts).
    if (call.type === "function_call" && typeof call.name === "string")
      turnCalls.push({ callId: call.callId, name: qualifiedCallName(call.name, call.namespace) });
  }
  if (completion.replayed) run.replayedCompletions.add(completion.eventId);
  scope.turnCalls = turnCalls;
  noteLocalCalls(output);
}

/** True when the model response that asked for `callId` was answered from the ledger. */
export function askedInReplay(run: LedgerRunState, callId: string): boolean {
  const cause = run.callCauses.get(callId);
  return cause !== undefined && run.replayedCompletions.has(cause);
}

/** The Attempt of a recorded tool attempt (to retry or abandon it after a person decided). */
export function recordedAttempt(
  events: readonly LedgerEvent[],
  attemptId: string,
): Attempt | undefined {
  const recorded = collectAttempts(events).find((attempt) => attempt.attemptId === attemptId);
  return recorded && attemptFromRecorded(recorded);
}

/**
 * Moves a resumed recorder's replay cursor past every recorded call: used when a run goes on
 * from a RunState checkpoint rather than re-executing from its input, so what comes next is
 * live.
 */
export function skipRecordedCalls(recorder: SessionRecorder): void {
  recorder.replay?.skipAll();
}

/**
 * A recorder that goes on recording on a run already in the ledger (one below the resumed run:
 * the current agent's, a handoff target's, a child run a settle closes), as the actor that
 * started it, with the run's redaction (`redact`, as the caller gave it to runWithLedger or
 * resumeRun).
 */
export async function recorderOfRun(
  store: EventStore,
  sessionId: string,
  runId: string,
  events: readonly LedgerEvent[],
  redact?: Redaction | false,
): Promise<SessionRecorder> {
  const started = events.find((event) => event.runId === runId && event.type === "run.started");
  const actor = started?.actor ?? agentActor("agent");
  return SessionRecorder.resume({
    store,
    sessionId,
    runId,
    actor,
    ...(redact !== undefined && redact !== false ? { redact } : {}),
  });
}
