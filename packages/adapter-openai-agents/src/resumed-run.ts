import {
  type EventStore,
  InvalidArgumentError,
  LedgerError,
  type LedgerEvent,
  readWholeSession,
} from "@agent-ledger/core";

/** What the ledger holds of the run `resumeRun` goes on. */
export interface RecordedRun {
  /** The whole session, in commit order. */
  events: LedgerEvent[];
  /** The run's own events. */
  rootEvents: LedgerEvent[];
}

function parentOf(events: readonly LedgerEvent[], runId: string): string | undefined {
  return events.find((event) => event.runId === runId && event.type === "run.started")?.parentRunId;
}

/**
 * Reads the session of run `runId`, refusing what cannot be resumed with the option at fault:
 * a session with no events (`not-found` at `$.sessionId`), a run the session does not hold
 * (`not-found` at `$.runId`), a run below another one, a handoff's or an agent tool's, which
 * goes on only with the run that started it (`invalid-argument` at `$.runId`, naming the run
 * to resume).
 */
export async function readResumedRun(
  store: EventStore,
  sessionId: string,
  runId: string,
): Promise<RecordedRun> {
  const events = await readWholeSession(store, sessionId);
  if (events.length === 0)
    throw new LedgerError("not-found", `session ${sessionId} not found: it has no events`, {
      path: "$.sessionId",
    });
  const rootEvents = events.filter((event) => event.runId === runId);
  if (rootEvents.length === 0)
    throw new LedgerError("not-found", `run ${runId} not found in session ${sessionId}`, {
      path: "$.runId",
    });
  const parent = parentOf(events, runId);
  if (parent !== undefined) {
    let top = parent;
    const seen = new Set([runId]);
    for (let above = parentOf(events, top); above !== undefined && !seen.has(above); ) {
      seen.add(top);
      top = above;
      above = parentOf(events, top);
    }
    throw new InvalidArgumentError(
      "$.runId",
      `run ${runId} is a child run of ${parent}${top === parent ? "" : `, itself below ${top}`}: resume ${top}`,
    );
  }
  return { events, rootEvents };
}
