import {
  type JsonObject,
  type LedgerEvent,
  readWholeSession,
  type SessionRecorder,
} from "@agent-ledger/core";
import { recorderOfRun, runTree } from "./ledger-state.js";
import type { LedgerScope } from "./scope.js";

// Closes the runs a finished run opened below itself (handoff targets), deepest first.
export async function closeChildRuns(
  scope: LedgerScope,
  close: (recorder: SessionRecorder) => Promise<unknown>,
): Promise<void> {
  const { store, sessionId } = scope.root;
  const events = await readWholeSession(store, sessionId);
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
        : await recorderOfRun(store, sessionId, runId, events);
    // The agent of a tool call a person abandoned (Agent.asTool) never finished: it did not
    // complete with the run's output, it was cancelled with that call.
    const abandoned = abandonedCause(events, runId);
    if (abandoned) await recorder.cancelRun(abandoned);
    else await close(recorder);
  }
}

// Why the tool call that started `runId` was abandoned, if it was.
function abandonedCause(events: readonly LedgerEvent[], runId: string): string | undefined {
  const started = events.find((event) => event.runId === runId && event.type === "run.started");
  const cause = events.find(
    (event) => event.eventId === started?.causedByEventId && event.type === "tool.requested",
  );
  if (!cause?.attemptId) return undefined;
  const abandonment = events.find(
    (event) =>
      event.type === "attempt.abandoned" &&
      event.runId === cause.runId &&
      event.attemptId === cause.attemptId,
  );
  if (!abandonment) return undefined;
  const reason = (abandonment.payload as JsonObject | null)?.reason;
  return `its tool call ${cause.attemptId} was abandoned${typeof reason === "string" ? `: ${reason}` : ""}`;
}
