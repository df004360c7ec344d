import {
  canonicalJson,
  findLedgerError,
  type JsonValue,
  LedgerError,
  type LedgerEvent,
} from "@agent-ledger/core";
import type { RunResult, RunState, RunToolApprovalItem, StreamedRunResult } from "@openai/agents";
import { approvalCallId, undecidedInterruptions } from "./approval-decisions.js";
import { awaitedCalls } from "./awaited-calls.js";
import {
  type CallInFlightAtCrash,
  callsInFlightAtCrash,
  inFlightAttemptOf,
} from "./calls-in-flight-at-crash.js";
import { type RunStateCheckpoint, runStateCheckpoint } from "./checkpoint.js";
import { closeChildRuns } from "./close-child-runs.js";
import { recordedOutput } from "./model-json.js";
import { sameRunState } from "./run-state-position.js";
import { stampCheckpoint, stampRunState } from "./run-state-stamp.js";
import type { LedgerScope } from "./scope.js";
import { toldToResumeRunUsers } from "./unresolved-call.js";

// biome-ignore lint/suspicious/noExplicitAny: any context
export type AnyRunState = RunState<any, any>;
// biome-ignore lint/suspicious/noExplicitAny: any context
export type AnyResult = RunResult<any, any> | StreamedRunResult<any, any>;

/** What a recorded run ended with. */
interface RunResultBase {
  sessionId: string;
  runId: string;
  finalOutput: unknown;
  interruptions: RunToolApprovalItem[];
  /**
   * The `interruptions` that are calls the process was making when it died, each with its
   * attempt: they may have had their effect, so check it before approving one (approved, it
   * runs again). Empty when none is.
   */
  inFlightAtCrash: CallInFlightAtCrash[];
  /** The SDK's result of the last segment (undefined when read back from the ledger). */
  result: AnyResult | undefined;
}

/**
 * How a run ended, told apart by `status` so that TypeScript narrows it:
 * - `completed`: `finalOutput` is the answer; `state` is undefined when a completed run is only
 *   read back from the ledger.
 * - `interrupted`: waiting for tool approvals (see `interruptions`); decide them on `state`
 *   (always there) and pass it to `resumeRun`.
 * - `cancelled`: the consumer of a streamed run stopped reading it (recorded as `run.cancelled`).
 */
export type LedgerRunResult =
  | (RunResultBase & { status: "completed"; state: AnyRunState | undefined })
  | (RunResultBase & { status: "interrupted"; state: AnyRunState })
  | (RunResultBase & { status: "cancelled"; state: AnyRunState | undefined });

/** A streamed run: read `stream`, then await `done`. */
export interface LedgerStreamedRun {
  sessionId: string;
  runId: string;
  // biome-ignore lint/suspicious/noExplicitAny: any context
  stream: StreamedRunResult<any, any>;
  done: Promise<LedgerRunResult>;
}

/**
 * Records how a segment of the run ended: paused at interruptions (a RunState checkpoint, not
 * written again when the run is paused where its latest checkpoint, `paused`, says: a resume
 * that finds the same calls undecided, polled in a loop, adds nothing), or done (the final
 * checkpoint, then the run and the runs below it completed). Every state handed out is stamped
 * with its run (`stampRunState`), and a paused one with the checkpoint it is at
 * (`stampCheckpoint`).
 */
export async function finish(
  scope: LedgerScope,
  result: AnyResult,
  paused?: LedgerEvent,
): Promise<LedgerRunResult> {
  // A refusal the SDK made output for the model (a shell's or editor's): the run stops, open.
  if (scope.refused !== undefined) throw scope.refused;
  const { sessionId, runId } = scope.root;
  const base = { sessionId, runId, result };
  const currentRunId = scope.current?.runId ?? runId;
  stampRunState(result.state, { sessionId, runId });
  if (result.interruptions.length > 0) {
    // Those the ledger held a decision for are decided on `state` already: not asked again.
    const undecided = undecidedInterruptions(result.state, result.interruptions);
    const checkpoint = runStateCheckpoint(result.state, {
      kind: "interruption",
      currentRunId,
      replayApprovals: result.interruptions
        .map((item) => approvalCallId(item))
        .filter((callId) => scope.run.replayApprovals.has(callId)),
      awaitingDecision: awaitedCalls(undecided, (item) => inFlightAttemptOf(scope, item)),
    });
    const at =
      paused !== undefined &&
      samePayload(paused.payload as unknown as RunStateCheckpoint, checkpoint)
        ? paused
        : await scope.root.checkpoint(checkpoint);
    stampCheckpoint(result.state, at.eventId);
    return {
      ...base,
      status: "interrupted",
      finalOutput: undefined,
      interruptions: undecided,
      inFlightAtCrash: callsInFlightAtCrash(scope, undecided),
      state: result.state,
    };
  }
  await scope.root.checkpoint(runStateCheckpoint(result.state, { kind: "final", currentRunId }));
  const finalOutput = result.finalOutput ?? null;
  const recorded = recordedOutput(finalOutput);
  await closeChildRuns(scope, (recorder) => recorder.completeRun(recorded));
  await scope.root.completeRun(recorded);
  return {
    ...base,
    status: "completed",
    finalOutput,
    interruptions: [],
    inFlightAtCrash: [],
    state: result.state,
  };
}

// The checkpoint `next` says what `recorded` says: the same state (`sameRunState`) and the same
// facts around it.
function samePayload(recorded: RunStateCheckpoint, next: RunStateCheckpoint): boolean {
  const facts = (payload: RunStateCheckpoint) =>
    canonicalJson({ ...payload, state: null } as unknown as JsonValue);
  return facts(recorded) === facts(next) && sameRunState(recorded.state, next.state);
}

// The run was stopped without a final output (and without a RunState that could be saved
// mid-turn): by default, the consumer of a streamed run stopped reading. It did not complete:
// it is closed as cancelled with `reason`, and so are the runs it opened below itself.
export async function cancelled(
  scope: LedgerScope,
  result: AnyResult | undefined,
  reason = "the consumer stopped reading the stream",
): Promise<LedgerRunResult> {
  await closeChildRuns(scope, (recorder) => recorder.cancelRun(reason));
  await scope.root.cancelRun(reason);
  return {
    sessionId: scope.root.sessionId,
    runId: scope.root.runId,
    result,
    status: "cancelled",
    finalOutput: undefined,
    interruptions: [],
    inFlightAtCrash: [],
    state: result?.state,
  };
}

// A run that failed for a reason of its own (model error, tool error, maxTurns) is closed as
// failed, with the runs it opened below itself (a handoff target it failed in). A ledger failure
// (store down, unresolved call, divergence) leaves them open so the run can be resumed, and is
// what the caller gets: the SDK wraps a refusal inside a tool in its ToolCallError, which has no
// `code` to tell a divergence from a store outage.
export async function failed(scope: LedgerScope, error: unknown): Promise<never> {
  const ledgerError = findLedgerError(error);
  // A call in flight at the crash the resume may not make: said with the routes a user has.
  if (LedgerError.isInstance(ledgerError, "unresolved-attempt"))
    throw toldToResumeRunUsers(ledgerError, { store: scope.root.store });
  if (ledgerError !== undefined) throw ledgerError;
  // Best effort: the run's own error is what the caller must see, not a store outage on top.
  await closeChildRuns(scope, (recorder) => recorder.failRun(error)).catch(() => undefined);
  await scope.root.failRun(error).catch(() => undefined);
  throw error;
}
