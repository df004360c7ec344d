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

/**
 * A run tree paused at an approval whose pause asks about no call a crash left in flight: its
 * calls still open (an agent tool call whose agent paused inside it) wait with the pause, as
 * `agent-ledger inspect` shows them ("WAITING ON A DECISION"), and nothing of it is in flight.
 * A pause that asks about a crash's call (`inFlightAttemptId`) is not one: that call may have
 * had its effect.
 */
function pausedWithNothingInFlight(tree: readonly RunView[]): boolean {
  const pauses = tree.flatMap((run) => run.awaitingDecision ?? []);
  return (
    pauses.length > 0 &&
    pauses.every((pause) => pause.calls.every((call) => call.inFlightAttemptId === undefined))
  );
}

/** An attempt as the refusals' `details` name a call. */
function callOf(attempt: AttemptView): CallInFlight {
  return {
    runId: attempt.runId,
    attemptId: attempt.attemptId,
    kind: attempt.kind,
    ...(attempt.name !== undefined ? { name: attempt.name } : {}),
    ...(attempt.toolCallId !== undefined ? { toolCallId: attempt.toolCallId } : {}),
  };
}

// The calls in flight of each open top-level run (its child runs' included), by that run's id,
// in the order inspection lists them.
function callsInFlightByOpenRun(
  runs: readonly RunView[],
  unresolved: readonly AttemptView[],
): Map<string, CallInFlight[]> {
  const topOf = new Map<string, RunView>();
  const waiting = new Set<RunView>();
  for (const top of runs) {
    const tree = runsInTreeOrder([top]).map(({ run }) => run);
    for (const run of tree) topOf.set(run.runId, top);
    if (pausedWithNothingInFlight(tree)) waiting.add(top);
  }
  const byRun = new Map<string, CallInFlight[]>();
  for (const attempt of unresolved) {
    const top = topOf.get(attempt.runId);
    // A closed run takes no more events: nothing of it is resumed, nor made again. A run paused
    // at an approval keeps the calls it waits in open (an agent tool call whose agent asks):
    // no process died during them.
    if (top === undefined || top.status !== "running" || waiting.has(top)) continue;
    const call = callOf(attempt);
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

/** The last call a run open with nothing in flight made, as the refusal's `details.lastCall` gives it. */
interface CallMade extends CallInFlight {
  status: AttemptView["status"];
}

/**
 * The first open top-level run that a crash left between calls (the session holds no call in
 * flight): no pause awaiting a decision in its tree, and calls made (with their outcomes), which
 * a new run would make again. A run whose last call a person abandoned (`agent-ledger resolve --abandon`,
 * the way out the in-flight refusal names when a run is not to go on) is not one: that person
 * decided about it.
 */
function runLeftBetweenCalls(
  runs: readonly RunView[],
): { runId: string; last: CallMade; calls: number } | undefined {
  for (const top of runs) {
    if (top.status !== "running") continue;
    const tree = runsInTreeOrder([top]).map(({ run }) => run);
    if (tree.some((run) => run.awaitingDecision !== undefined)) continue;
    // The call settled last, and how many settled: one pass, nothing kept of the others.
    let last: AttemptView | undefined;
    let calls = 0;
    for (const run of tree)
      for (const step of run.steps)
        for (const attempt of step.attempts) {
          if (attempt.resolvedAt === undefined) continue;
          calls++;
          if (last === undefined || attempt.resolvedAt >= (last.resolvedAt as string))
            last = attempt;
        }
    if (last === undefined || last.status === "abandoned") continue;
    return { runId: top.runId, last: { ...callOf(last), status: last.status }, calls };
  }
  return undefined;
}

function describeMade(call: CallMade): string {
  if (call.kind === "model") return `a model call (${call.status})`;
  const id = call.toolCallId !== undefined ? ` (${call.toolCallId})` : "";
  return `tool call ${call.name ?? "(unnamed)"}${id} (${call.status})`;
}

/**
 * `runWithLedger` given no runId starts a run with a generated one. On a session that holds a
 * run a process left open during a call (it died, SIGKILLed, mid-tool-call), that new run makes
 * every call again, the side effect in flight and those that completed: a restarted worker that
 * calls `runWithLedger` as it did at first charges twice without a word. So this refuses, before
 * anything is written, with `unresolved-attempt` naming the run and its calls in flight, and
 * what to do: resume it, or decide its calls, or start beside it with a runId of one's own (the
 * explicit choice: a run still running in another process looks the same in the ledger). A run
 * a process left open between calls (it died after a charge completed, before the next model
 * call was requested, or its ledger failed there) is refused too, with `conflict`: the new run
 * would charge again just the same. A run paused at an approval, or open with no call made yet,
 * is not refused: nothing of it would run twice.
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
  if (open === undefined) {
    // No call in flight anywhere: a run open between calls is the one to refuse on.
    const between = runLeftBetweenCalls(inspection.runs);
    if (between !== undefined) throw leftBetweenCalls(store, sessionId, between);
    return;
  }
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

// The refusal of a new run beside one a process left open between calls.
function leftBetweenCalls(
  store: EventStore,
  sessionId: string,
  { runId, last, calls }: { runId: string; last: CallMade; calls: number },
): LedgerError {
  const inspect = ledgerCommand(store, "inspect", [sessionId]);
  const ids = `sessionId: ${JSON.stringify(sessionId)}, runId: ${JSON.stringify(runId)}`;
  return new LedgerError(
    "conflict",
    `session ${sessionId} holds run ${runId}, left open with no call in flight after ${calls} call(s) (the last: ${describeMade(last)}): its process stopped between calls, or still runs it, and a new run would make those calls again, so runWithLedger (given no runId) wrote nothing. To continue that run, call resumeRun(agent, { store, ${ids} }) (what it recorded is answered from the ledger). If it is not to go on, close it: (await SessionRecorder.resume({ store, ${ids}, actor: { type: "human", id: "you" } })).cancelRun("why"), then call runWithLedger again. If it is still running in another process, or to start another run beside it anyway, give runWithLedger a runId of your own. ${inspect} shows the run.`,
    { details: { sessionId, runId, lastCall: last, calls } },
  );
}
