import {
  canonicalJson,
  hashJson,
  InvalidArgumentError,
  type JsonObject,
  type JsonValue,
  LedgerError,
  type LedgerEvent,
} from "@agent-ledger/core";
import type { RunState } from "@openai/agents";
import { isRunStateCheckpoint, type RunStateCheckpoint } from "./checkpoint.js";
import { APPROVAL_EVENT_TYPE, isCallEvent } from "./ledger-state.js";
import { checkpointOfState, type RunOfState, runsOfState } from "./run-state-stamp.js";

// biome-ignore lint/suspicious/noExplicitAny: any context
type AnyRunState = RunState<any, any>;

/**
 * Where a serialized RunState stands in its run: its turn, agent, input, the model responses
 * and items it holds and the step it stopped at (its interruptions), hashed as canonical JSON
 * (`RunState.fromString` gives the same JSON in another key order). Not its context: that is
 * where the decisions a person makes on the state go (and the host's own context).
 */
export function runStatePosition(serialized: string): string {
  return positionOf(JSON.parse(serialized) as JsonObject);
}

/**
 * True when two serialized states stand at the same position with the same context (the
 * decisions made on them, the run they are stamped for, usage): going on from one does what
 * going on from the other would. What else differs is the SDK's bookkeeping (a trace that
 * `RunState.fromString` does not restore).
 */
export function sameRunState(a: string, b: string): boolean {
  const [first, second] = [JSON.parse(a) as JsonObject, JSON.parse(b) as JsonObject];
  return (
    positionOf(first) === positionOf(second) &&
    canonicalJson(first.context ?? null) === canonicalJson(second.context ?? null)
  );
}

function positionOf(json: JsonObject): string {
  const responses = Array.isArray(json.modelResponses) ? json.modelResponses : [];
  return hashJson({
    currentTurn: json.currentTurn ?? null,
    currentAgent: json.currentAgent ?? null,
    originalInput: json.originalInput ?? null,
    modelResponses: responses.map((response) => {
      const { output, responseId } = (response ?? {}) as JsonObject;
      return { output: output ?? null, responseId: responseId ?? null };
    }),
    generatedItems: json.generatedItems ?? null,
    currentStep: json.currentStep ?? null,
  } as JsonValue);
}

/** The run `resumeRun` was asked to go on, and what the ledger holds of it. */
export interface ResumedRun {
  sessionId: string;
  runId: string;
  /** The run's own events. */
  rootEvents: readonly LedgerEvent[];
  /** The events of the run and of every run below it, in commit order. */
  treeEvents: readonly LedgerEvent[];
}

// Why a decision recorded on the run's tree after `after` (the checkpoint `state` is at) makes
// `state` stale, if one does: a decision on another copy of the state that `state` does not
// make (APPROVAL_EVENT_TYPE, recorded by the process that went on from that copy), or one
// made outside the SDK (`agent-ledger resolve`: attempt.approved, attempt.abandoned). The
// adapter's own abandonment of a call rejected on a state follows that state's decision.
function staleBecause(
  state: AnyRunState,
  events: readonly LedgerEvent[],
  after: LedgerEvent,
): string | undefined {
  const later = events.filter((event) => event.commitCursor > after.commitCursor);
  const rejectedOnState = new Set<unknown>();
  for (const event of later) {
    if (event.type !== APPROVAL_EVENT_TYPE) continue;
    const { callId, toolName, approved, attemptId } = event.payload as JsonObject;
    const onState = state._context.isToolApproved({
      toolName: String(toolName ?? ""),
      callId: String(callId ?? ""),
    });
    if (onState !== (approved === true))
      return `call ${String(callId)} was ${approved === true ? "approved" : "rejected"} on another copy of this RunState (seq ${event.seq})`;
    if (approved !== true) rejectedOnState.add(attemptId);
  }
  const outside = later.find(
    (event) =>
      event.type === "attempt.approved" ||
      (event.type === "attempt.abandoned" && !rejectedOnState.has(event.attemptId)),
  );
  if (outside === undefined) return undefined;
  const verb = outside.type === "attempt.approved" ? "approved for a re-run" : "abandoned";
  const by = outside.actor ? ` by ${outside.actor.id}` : "";
  return `attempt ${outside.attemptId} of run ${outside.runId} was ${verb}${by} (seq ${outside.seq})`;
}

// A call recorded on the run's tree after its latest checkpoint `after`: a process went on from
// this state (or a copy of it) and died before the run paused again. Going on from the state
// again would make the calls it made again.
function callSince(run: ResumedRun, after: LedgerEvent): LedgerEvent | undefined {
  return run.treeEvents.find(
    (event) => event.commitCursor > after.commitCursor && isCallEvent(event),
  );
}

/**
 * Checks that `state`, given to resumeRun with a person's decisions, is the state the run is
 * paused at: stamped for this run (`stampRunState`) and handed out at its latest interruption
 * checkpoint (`stampCheckpoint`; a state written before states were stamped is known by its
 * position only), with no decision and no call recorded on the run's tree since. Going on from
 * any other would run again calls the ledger holds as done (a call in flight when a process
 * that went on from it died), record another run's calls on this one, or override a decision
 * another person recorded. An older state of this run (a request sent again), or one that a
 * decision or call recorded since makes stale, is `conflict`; any other state `invalid-argument`; both at `$.state`, before
 * anything runs.
 */
export function assertCurrentState(state: AnyRunState, run: ResumedRun): void {
  const { runId } = run;
  let json: JsonObject;
  try {
    json = JSON.parse(state.toString()) as JsonObject;
  } catch (error) {
    throw new LedgerError(
      "invalid-argument",
      `$.state: the RunState does not serialize (${(error as Error).message}): pass the state of an interrupted run`,
      { path: "$.state", cause: error },
    );
  }
  const stamped = runsOfState(json);
  if (
    stamped.length > 0 &&
    !stamped.some((owner) => owner.sessionId === run.sessionId && owner.runId === runId)
  ) {
    const owner = stamped[0] as RunOfState;
    throw new InvalidArgumentError(
      "$.state",
      `this RunState is run ${owner.runId}'s of session ${owner.sessionId}, not run ${runId}'s of session ${run.sessionId}: nothing was run`,
    );
  }
  const paused = run.rootEvents.filter(
    (event) =>
      isRunStateCheckpoint(event) &&
      (event.payload as unknown as RunStateCheckpoint).kind === "interruption",
  );
  const latest = paused.at(-1);
  if (latest === undefined)
    throw new InvalidArgumentError(
      "$.state",
      `run ${runId} never paused at an approval: there is no state of it to decide on`,
    );
  // The checkpoint the state was handed out at (`stampCheckpoint`); a state written before
  // states were stamped with it is known by its position. Two checkpoints can stand at the same
  // position: the run paused again at a call that was in flight when a process died.
  const stampedAt = checkpointOfState(json);
  const position = positionOf(json);
  const isAt = (event: LedgerEvent) =>
    stampedAt !== undefined
      ? event.eventId === stampedAt
      : runStatePosition((event.payload as unknown as RunStateCheckpoint).state) === position;
  if (isAt(latest)) {
    const stale = staleBecause(state, run.treeEvents, latest);
    if (stale !== undefined)
      throw new LedgerError(
        "conflict",
        `$.state: ${stale} after this RunState was saved: the decisions on it may contradict that one, so none was recorded or run. Resume without state to load the run with that decision, and decide on what is still asked.`,
        { path: "$.state", details: { runId, checkpointSeq: latest.seq } },
      );
    const call = callSince(run, latest);
    if (call === undefined) return;
    throw new LedgerError(
      "conflict",
      `$.state: run ${runId} went on from this RunState and stopped (${call.type} on run ${call.runId} at seq ${call.seq}; a process died?): going on from it again would make those calls again. A request sent again? Resume without state to load the run as the ledger holds it, and decide on what is asked.`,
      { path: "$.state", details: { runId, checkpointSeq: latest.seq, callSeq: call.seq } },
    );
  }
  const older = paused.slice(0, -1).findLast(isAt);
  if (older !== undefined)
    throw new LedgerError(
      "conflict",
      `$.state: run ${runId} has moved on since this RunState was saved (checkpoint at seq ${older.seq}; it is paused at the one at seq ${latest.seq}): going on from it would run again calls the ledger holds as done. A request sent again? Resume without state to load the latest one, and decide on it.`,
      { path: "$.state", details: { runId, stateSeq: older.seq, latestSeq: latest.seq } },
    );
  throw new InvalidArgumentError(
    "$.state",
    `this RunState is not one run ${runId} was paused at (another run's state?): nothing was run`,
  );
}
