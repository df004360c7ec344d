import {
  type EventStore,
  InvalidArgumentError,
  LedgerError,
  type LedgerEvent,
  ledgerCommand,
  readWholeSession,
  resolveEvents,
} from "@agent-ledger/core";
import { isCallEvent } from "./ledger-state.js";

/** What the ledger holds of the run `resumeRun` goes on. */
export interface RecordedRun {
  /**
   * The whole session, in commit order: call events as stored, every other one resolved
   * (`resolveRecords`).
   */
  events: LedgerEvent[];
  /** The run's own events. */
  rootEvents: LedgerEvent[];
}

function parentOf(events: readonly LedgerEvent[], runId: string): string | undefined {
  return events.find((event) => event.runId === runId && event.type === "run.started")?.parentRunId;
}

/**
 * The runs of a session `resumeRun` takes (those at the top of their tree, whatever their
 * status), the first few by id: what a run id that is not there was likely meant to be.
 */
function runsToResume(events: readonly LedgerEvent[]): string {
  const tops = events
    .filter((event) => event.type === "run.started" && event.parentRunId === undefined)
    .map((event) => event.runId);
  if (tops.length === 0) return "it holds no run resumeRun takes";
  const shown = tops.slice(0, 5).join(", ");
  return `its runs (child runs left out): ${shown}${tops.length > 5 ? ` and ${tops.length - 5} more` : ""}`;
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
  const events = await resolveRecords(store, await readWholeSession(store, sessionId));
  if (events.length === 0)
    throw new LedgerError(
      "not-found",
      `session ${sessionId} not found: it has no events in this store. Check that options.store is the store the run recorded to; the sessions it holds are listed by store.listSessions() or \`agent-ledger sessions\``,
      { path: "$.sessionId" },
    );
  const rootEvents = events.filter((event) => event.runId === runId);
  if (rootEvents.length === 0)
    throw new LedgerError(
      "not-found",
      `run ${runId} not found in session ${sessionId}: ${runsToResume(events)}; every run of it is listed by store.listRuns(${JSON.stringify(sessionId)}) or ${ledgerCommand(store, "inspect", [sessionId])}`,
      { path: "$.runId" },
    );
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

/**
 * `events` with every event but a call's resolved: the resume reads checkpoints (their
 * serialized RunState), decisions and run payloads field by field, and the recorder moves any
 * of them over its size threshold to a blob. Call events (and approvals of attempts) stay as
 * stored: the resumed recorders resolve their own runs, and the events of a call whose content
 * is needed are resolved where they are (approval-decisions.ts), once. Nothing is fetched for
 * events without blob references.
 */
async function resolveRecords(store: EventStore, events: LedgerEvent[]): Promise<LedgerEvent[]> {
  const records = events.filter(
    (event) => !isCallEvent(event) && event.type !== "attempt.approved",
  );
  const resolved = await resolveEvents(store, records);
  const byEvent = new Map(records.map((event, index) => [event, resolved[index] ?? event]));
  return events.map((event) => byEvent.get(event) ?? event);
}
