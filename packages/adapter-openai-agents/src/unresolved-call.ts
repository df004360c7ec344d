import { type EventStore, ledgerCommand, UnresolvedAttemptError } from "@agent-ledger/core";

// Core's `unresolved-attempt` tells whoever holds the run's SessionRecorder to call
// `recorder.abandon(error.attempt, reason)`. A `resumeRun` user holds none: this adapter makes
// the recorder itself. What they can do is decide the call from a shell with `agent-ledger
// resolve` and resume again, so the error they get says that, with the command filled in.

/** The errors already told in this adapter's words, so that none is told twice. */
const told = new WeakSet<UnresolvedAttemptError>();

/**
 * `error` (core's `unresolved-attempt` for a call in flight at the crash) with a message that
 * names the routes a `resumeRun` user has: `agent-ledger resolve` on the call's attempt, then
 * `resumeRun` again. `handoffTo` for a handoff's call (its `onHandoff` callback was running),
 * whose abandonment hands off without running the callback and is no answer to the model.
 * `store`, the run's, is named in the commands (the CLI's own default is another store). The
 * attempt and the details are kept.
 */
export function toldToResumeRunUsers(
  error: UnresolvedAttemptError,
  { store, handoffTo }: { store: EventStore; handoffTo?: string },
): UnresolvedAttemptError {
  // Only core's refusal of one call in flight: its refusal to complete a run with calls open
  // (`details.unresolved`, every call listed) says other things, agent-ledger resolve among them.
  if (told.has(error) || error.details.unresolved !== undefined) return error;
  const { attempt } = error;
  const id = attempt.toolCallId ? ` (${attempt.toolCallId})` : "";
  const ids = [attempt.sessionId, attempt.attemptId];
  const resolve = ledgerCommand(store, 'resolve --abandon "what you found"', ids);
  const inspect = ledgerCommand(store, "inspect", [attempt.sessionId]);
  const message =
    handoffTo === undefined
      ? `tool call ${attempt.name ?? "(unnamed)"}${id} was in flight when the process died and is not declared idempotent: it may or may not have happened, so it is not made again by itself. Check its effect, then decide it from a shell: ${resolve} (the agent's model reads the reason as the call's result), or \`--approve "reason"\` instead to make it again; then call resumeRun again. ${inspect} prints that command too.`
      : `handoff ${attempt.name ?? "(unnamed)"}${id} to ${handoffTo} was in flight when the process died (its onHandoff callback was running) and is not declared idempotent: the callback may or may not have had its effect, and the SDK has no approval to ask about a handoff with. Check the callback's effect, then decide it from a shell: ${resolve} hands off without running the callback again (the model never sees the reason), \`--approve "reason"\` instead runs it once more; then call resumeRun again. ${inspect} prints that command too.`;
  const retold = new UnresolvedAttemptError(
    message,
    { ...error.details, attemptId: error.attemptId },
    attempt,
  );
  told.add(retold);
  return retold;
}
