import { readWholeSession, type SessionRecorder } from "@agent-ledger/core";
import { settleAbandonedCalls } from "./abandoned-calls.js";
import { recorderOfRun, runTree } from "./ledger-state.js";
import type { LedgerScope } from "./scope.js";

/**
 * Closes the runs a finished run opened below itself (handoff targets, agents used as tools),
 * deepest first, with `close`. The runs made inside a tool call that was abandoned are not
 * closed so: their agent never finished. They are settled as core settles them
 * (`settleAbandonedCalls`): the calls in flight there abandoned, the runs cancelled.
 */
export async function closeChildRuns(
  scope: LedgerScope,
  close: (recorder: SessionRecorder) => Promise<unknown>,
): Promise<void> {
  const { store, sessionId } = scope.root;
  let events = await readWholeSession(store, sessionId);
  if (await settleAbandonedCalls(scope, events)) events = await readWholeSession(store, sessionId);
  const tree = runTree(events, scope.root.runId);
  tree.delete(scope.root.runId);
  const closed = new Set(
    events
      .filter((event) => ["run.completed", "run.failed", "run.cancelled"].includes(event.type))
      .map((event) => event.runId),
  );
  const open = [...tree].filter((runId) => !closed.has(runId)).reverse();
  for (const runId of open) {
    const recorder =
      scope.current?.runId === runId
        ? scope.current
        : await recorderOfRun(store, sessionId, runId, events, scope.run.redact);
    await close(recorder);
  }
}
