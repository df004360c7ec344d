// What the middleware tests read back from the ledger, and the outcome they assert alike.
import {
  type EventStore,
  inspectSession,
  type LedgerEvent,
  readWholeRun,
  resolveEvents,
} from "@agent-ledger/core";
import { expect } from "vitest";

/** The run `assistantRecorder` records to by default. */
const DEFAULT_RUN = { sessionId: "s1", runId: "r1" };

/** The events of a run (default: `assistantRecorder`'s), payloads resolved as a reader sees them. */
export async function eventsOf(store: EventStore, address = DEFAULT_RUN): Promise<LedgerEvent[]> {
  return resolveEvents(store, await readWholeRun(store, address));
}

/**
 * Asserts what the default run holds after two calls, the first of which got a response the
 * ledger cannot hold (not plain JSON): that call recorded as failed, none left in flight, and
 * the second call recorded as completed (the run went on).
 */
export async function expectUnholdableResponseRecordedAsFailure(store: EventStore): Promise<void> {
  expect((await eventsOf(store)).map((event) => event.type)).toEqual([
    "run.started",
    "model.requested",
    "model.failed",
    "model.requested",
    "model.completed",
  ]);
  expect((await inspectSession(store, DEFAULT_RUN.sessionId)).unresolved).toEqual([]);
}
