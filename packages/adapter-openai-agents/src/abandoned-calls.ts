import {
  endOfRecorded,
  type LedgerEvent,
  lastToolAttempts,
  type RecordedAttempt,
  settleCallsInside,
} from "@agent-ledger/core";
import { recorderOfRun, runTree } from "./ledger-state.js";
import type { LedgerScope } from "./scope.js";

// A tool call that is abandoned (a person rejected it after a crash, in the SDK or with
// `agent-ledger resolve --abandon`) will not run again: what it left in flight in the runs made
// inside it (an agent used as a tool, at any depth) would never get an outcome. Core's
// `settleCallsInside` settles them, the one rule the CLI's `resolve --abandon` and every
// adapter follow: each call in flight there abandoned with "its tool call <name> (<id>) was
// abandoned: <reason>", each run cancelled with the reason.

/**
 * Settles, with `settleCallsInside`, every abandoned tool call of the run tree of `scope` that
 * still has open child runs: one a person abandoned by other means than `agent-ledger resolve`
 * (their own recorder), or a `resolve` killed part way. `events` is the session. The outermost
 * first: settling it settles the calls abandoned inside it too. True when it found one.
 */
export async function settleAbandonedCalls(
  scope: LedgerScope,
  events: readonly LedgerEvent[],
): Promise<boolean> {
  const { store, sessionId, runId } = scope.root;
  const closed = new Set(
    events
      .filter((event) => ["run.completed", "run.failed", "run.cancelled"].includes(event.type))
      .map((event) => event.runId),
  );
  const tree = runTree(events, runId);
  // Each run's tool calls by the request of each attempt: their last attempts, retries followed.
  const lastByRun = new Map<string, Map<string, RecordedAttempt>>();
  const lastOf = (run: string, request: string) => {
    let last = lastByRun.get(run);
    if (last === undefined) {
      last = lastToolAttempts(events.filter((event) => event.runId === run));
      lastByRun.set(run, last);
    }
    return last.get(request);
  };
  const settled = new Set<string>();
  let found = false;
  // In tree order: a run's `run.started` comes after its parent's.
  for (const started of events) {
    if (started.type !== "run.started" || started.runId === runId) continue;
    if (!tree.has(started.runId) || closed.has(started.runId) || settled.has(started.runId))
      continue;
    const parent = started.parentRunId;
    const cause = started.causedByEventId;
    if (parent === undefined || cause === undefined || settled.has(parent)) continue;
    const last = lastOf(parent, cause);
    const ended = last === undefined ? undefined : endOfRecorded(last);
    if (last === undefined || ended === undefined || !("abandoned" in ended)) continue;
    const owner = await recorderOfRun(store, sessionId, parent, events, scope.run.redact);
    const done = await settleCallsInside({
      recorder: owner,
      call: { ...last, requestedEventId: last.requested.eventId },
      ended,
    });
    for (const run of done) settled.add(run.runId);
    settled.add(started.runId);
    found = true;
  }
  return found;
}
