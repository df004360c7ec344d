import { toolCallLabel } from "../decisions/tool-call-end.js";
import { InvalidArgumentError, UnresolvedAttemptError } from "../events/errors.js";
import type { Attempt } from "./attempt.js";
import { noteLeftUnresolved } from "./left-unresolved.js";
import type { Stranded } from "./outcome-guard.js";
import type { RecorderState } from "./recorder-state.js";
import { ABANDON_COMMAND_USE, abandonCommand } from "./resolve-command.js";

/**
 * `SessionRecorder.leaveUnresolved`: `attempt`, open, is left without an outcome because none
 * can be known (`why`), and is stranded as an unknown append's request is: `completeRun` refuses
 * while it is open, and an outcome or a decision recorded for it lifts that.
 */
export function leaveUnresolved(state: RecorderState, attempt: Attempt, why: string): void {
  if (typeof why !== "string" || why.length === 0)
    throw new InvalidArgumentError("$.why", "leaveUnresolved needs why the outcome is unknown");
  state.open.openKind(attempt?.attemptId, attempt?.runId, state.runId, "leave it unresolved");
  state.open.strand(attempt, why);
  noteLeftUnresolved(attempt, why);
}

/**
 * Before the run is completed: `unresolved-attempt` (nothing written) while this recorder knows
 * of a call of its own that the ledger holds without an outcome only because an append's
 * outcome was unknown (see `OpenAttempts.stranded`): a request stored although its `before*`
 * rejected and that no call asked again, or an outcome found not stored after it failed.
 * Completed, the run would show that call in flight for good, on a run that takes no more
 * events. (A call this process made and that simply got no outcome is not refused: an adapter
 * may end a run with a call its framework skipped.) The last append's outcome is learnt first.
 */
export async function assertNoneStranded(state: RecorderState): Promise<void> {
  await state.queue.settled();
  if (state.queue.unsure) await state.queue.resolveUnknown();
  const stranded = state.open.stranded();
  if (stranded.length === 0) return;
  const first = stranded[0] as Stranded;
  const one = stranded.length === 1;
  const { runId } = state;
  throw new UnresolvedAttemptError(
    `run ${runId} cannot be completed while ${one ? "a call of it has" : `${stranded.length} calls of it have`} no outcome in the ledger: ${stranded.map(described).join("; ")}. Nothing was written: the run stays open. Record the outcome of a call that was made (toolCompleted, modelCompleted...), abandon one that was not (recorder.abandon(error.attempt, reason); from a shell, ${abandonCommand(state.store, { sessionId: state.sessionId, attemptId: first.attempt.attemptId })} ${ABANDON_COMMAND_USE}); or close the run with failRun or cancelRun.`,
    {
      attemptId: first.attempt.attemptId,
      runId,
      unresolved: stranded.map(({ attempt }) => ({
        attemptId: attempt.attemptId,
        kind: attempt.kind,
        ...(attempt.name !== undefined ? { name: attempt.name } : {}),
        ...(attempt.toolCallId !== undefined ? { toolCallId: attempt.toolCallId } : {}),
      })),
    },
    first.attempt,
  );
}

function described({ attempt, why }: Stranded): string {
  const what = attempt.kind === "tool" ? toolCallLabel(attempt) : "model call";
  return `${what} attempt ${attempt.attemptId}: ${why}`;
}
