import {
  type AttemptView,
  type EventStore,
  inspectSession,
  LedgerError,
  ledgerCommand,
  type RunView,
  runsInTreeOrder,
} from "@agent-ledger/core";

/** A call in flight in a session's open run, as the refusal's `details.unresolved` lists it. */
interface CallInFlight {
  runId: string;
  attemptId: string;
  kind: AttemptView["kind"];
  name?: string;
  toolCallId?: string;
}

// The calls in flight of each open top-level run (its child runs' included), by that run's id,
// in the order inspection lists them.
function callsInFlightByOpenRun(
  runs: readonly RunView[],
  unresolved: readonly AttemptView[],
): Map<string, CallInFlight[]> {
  const topOf = new Map<string, RunView>();
  for (const top of runs) for (const { run } of runsInTreeOrder([top])) topOf.set(run.runId, top);
  const byRun = new Map<string, CallInFlight[]>();
  for (const attempt of unresolved) {
    const top = topOf.get(attempt.runId);
    // A closed run takes no more events: nothing of it is resumed, nor made again.
    if (top === undefined || top.status !== "running") continue;
    const call: CallInFlight = {
      runId: attempt.runId,
      attemptId: attempt.attemptId,
      kind: attempt.kind,
      ...(attempt.name !== undefined ? { name: attempt.name } : {}),
      ...(attempt.toolCallId !== undefined ? { toolCallId: attempt.toolCallId } : {}),
    };
    const calls = byRun.get(top.runId);
    if (calls) calls.push(call);
    else byRun.set(top.runId, [call]);
  }
  return byRun;
}

function describeCall(call: CallInFlight): string {
  if (call.kind === "model") return `a model call, attempt ${call.attemptId}`;
  const id = call.toolCallId !== undefined ? ` (${call.toolCallId})` : "";
  return `tool call ${call.name ?? "(unnamed)"}${id}, attempt ${call.attemptId}: the call may have had its effect`;
}

/**
 * `runWithLedger` given no runId starts a run with a generated one. On a session that holds a
 * run a process left open during a call (it died, SIGKILLed, mid-tool-call), that new run makes
 * every call again, the side effect in flight and those that completed: a restarted worker that
 * calls `runWithLedger` as it did at first charges twice without a word. So this refuses, before
 * anything is written, with `unresolved-attempt` naming the run and its calls in flight, and
 * what to do: resume it, or decide its calls, or start beside it with a runId of one's own (the
 * explicit choice: a run still running in another process looks the same in the ledger). A run
 * paused at an approval, or open with no call in flight, is not refused: nothing of it is in
 * flight to run twice.
 */
export async function assertNoRunLeftInFlight(store: EventStore, sessionId: string): Promise<void> {
  // Most sessions hold no open run: one cheap listing, the whole session read only otherwise.
  const runs = await store.listRuns(sessionId);
  if (!runs.some((run) => run.status === "running")) return;
  const inspection = await inspectSession(store, sessionId, {
    resolve: false,
    missingBlobs: "keep",
  });
  const [open] = callsInFlightByOpenRun(inspection.runs, inspection.unresolved);
  if (open === undefined) return;
  const [runId, calls] = open;
  const [call] = calls as [CallInFlight, ...CallInFlight[]];
  const more = calls.length > 1 ? ` (and ${calls.length - 1} more call(s) in flight in it)` : "";
  const resolve = ledgerCommand(store, 'resolve --abandon "what you found"', [
    sessionId,
    call.attemptId,
  ]);
  const inspect = ledgerCommand(store, "inspect", [sessionId]);
  const ids = `sessionId: ${JSON.stringify(sessionId)}, runId: ${JSON.stringify(runId)}`;
  throw new LedgerError(
    "unresolved-attempt",
    `session ${sessionId} holds run ${runId}, left open by a process that stopped during ${describeCall(call)}${more}, and a new run would make its calls again, so runWithLedger (given no runId) wrote nothing. To continue that run, call resumeRun(agent, { store, ${ids} }). If it is not to go on, check the call's effect and decide it: ${resolve}, then call runWithLedger again. If it is still running in another process, or to start another run beside it anyway, give runWithLedger a runId of your own. ${inspect} shows the run.`,
    { details: { sessionId, runId, attemptId: call.attemptId, unresolved: calls } },
  );
}
