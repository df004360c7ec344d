import { type Attempt, LedgerError, type ToolCallEnd } from "@agent-ledger/core";
import type { AdapterState } from "./adapter-state.js";
import { closeLeftOpen, outcomeOfReplayed } from "./child-run-end.js";
import {
  AttemptAbandonedError,
  rebuildToolFailure,
  toolFailureMetadataOf,
} from "./replayed-errors.js";
import type { ToolCallContext } from "./tool-call-context.js";
import { decodeToolOutput, encodeToolOutput } from "./tool-output.js";

// The outcome of a wrapped tool's call: recorded once the tool has run, or, on resume, the
// recorded one given back.

/**
 * On resume: the recorded result (`{ output }`), or the recorded error thrown again. A child
 * run the call left open (the process died between its outcome and the child run's end, or a
 * person abandoned the call) is closed first, the calls it holds in flight abandoned.
 */
export async function replayedOutput(
  state: AdapterState,
  attempt: Attempt,
  name: string,
): Promise<{ output: unknown } | undefined> {
  const replayed = attempt.replayed;
  if (replayed === undefined) return undefined;
  // A failure stops the run: handed to the SDK, the error would be the tool's result for the
  // model, against the recorded one. The next resume closes the child run.
  await closeLeftOpen(state, attempt, outcomeOfReplayed(replayed));
  if (replayed.status === "completed")
    return { output: decodeToolOutput(replayed.result, replayed.metadata) };
  if (replayed.status === "failed") throw rebuildToolFailure(replayed.error, replayed.metadata);
  throw new AttemptAbandonedError(`tool call ${name}`, replayed.reason);
}

/**
 * Records the result, and returns the outcome recorded: completed, or failed with a
 * `non-serializable` error (the tool ran, but its result cannot be recorded: the SDK hands the
 * model this error, and the ledger says so; left unresolved, a resume would treat it as in
 * flight). An outcome the ledger cannot take stops the run (thrown).
 */
async function recordOutput(
  state: AdapterState,
  attempt: Attempt,
  output: unknown,
): Promise<ToolCallEnd> {
  try {
    const { result, metadata } = encodeToolOutput(output);
    await state.recorder.toolCompleted(attempt, result, metadata ? { metadata } : {});
    return { failed: false };
  } catch (error) {
    if (!LedgerError.isInstance(error, "non-serializable")) {
      state.block(error);
      throw error;
    }
    await state.settle(state.recorder.toolFailed(attempt, error));
    return { failed: true, error };
  }
}

/**
 * Records the tool's failure, then closes its child run. If the failure cannot be recorded
 * the child run stays open (the call runs again on resume, and adopts it) and the run stops.
 */
export async function recordFailed(
  state: AdapterState,
  context: ToolCallContext,
  attempt: Attempt,
  error: unknown,
): Promise<void> {
  await context.beforeOutcome();
  const metadata = toolFailureMetadataOf(error);
  await state.settle(state.recorder.toolFailed(attempt, error, metadata ? { metadata } : {}));
  await context.close({ failed: true, error });
}

/**
 * A tool call its caller stopped (the call's `abortSignal` aborted: the user pressed stop, the
 * SDK's timeout) while it ran: what the tool had done by then is unknown (the charge may have
 * gone out before the confirmation was cut off), so no outcome is recorded. The call stays in
 * flight, as after a crash (`recorder.leaveUnresolved`): a resume refuses it
 * (`unresolved-attempt`) unless the tool is idempotent or a person decided it, where a recorded
 * `tool.failed` would have the model told it failed and ask for it again. Completing the run is
 * refused until it is decided; failing or cancelling it still closes it. A child run its inner
 * calls made stays open, as after a crash, closed when the call is decided.
 */
export function leaveUndecided(state: AdapterState, attempt: Attempt): void {
  state.recorder.leaveUnresolved(
    attempt,
    "its caller's abortSignal stopped it while it ran, so it may or may not have happened",
  );
}

/** Records the tool's result, then closes its child run; throws a result it cannot record. */
export async function recordResult(
  state: AdapterState,
  context: ToolCallContext,
  attempt: Attempt,
  output: unknown,
): Promise<void> {
  await context.beforeOutcome();
  const outcome = await recordOutput(state, attempt, output);
  await context.close(outcome);
  if ("failed" in outcome && outcome.failed) throw outcome.error;
}
