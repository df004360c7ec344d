import { NotFoundError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import type { EventStore } from "./event-store.js";
import { assertEventStore } from "./validate.js";

const PAGE = 5000;

/** Every event of a run (from seq `fromSeq` on, if given), in seq order, read page by page. */
export async function readWholeRun(
  store: EventStore,
  address: { sessionId: string; runId: string },
  fromSeq = 0,
): Promise<LedgerEvent[]> {
  assertEventStore(store);
  const events: LedgerEvent[] = [];
  for (;;) {
    // The address's two ids, not the object: a recorder's options given as the address hold
    // more keys, which readRun refuses.
    const page = await store.readRun({
      sessionId: address.sessionId,
      runId: address.runId,
      fromSeq,
      limit: PAGE,
    });
    for (const event of page.events) events.push(event);
    if (page.events.length < PAGE) return events;
    fromSeq = page.nextCursor;
  }
}

/**
 * `readWholeRun` of a run that must be in the store: `not-found`, naming session and run, if it
 * holds none of its events (a mistyped id must not read as a run with nothing in it; a started
 * run holds its `run.started`).
 */
export async function readRecordedRun(
  store: EventStore,
  address: { sessionId: string; runId: string },
): Promise<LedgerEvent[]> {
  const events = await readWholeRun(store, address);
  if (events.length === 0) {
    const { sessionId, runId } = address;
    throw new NotFoundError(`run ${runId} not found in session ${sessionId}`, { sessionId, runId });
  }
  return events;
}

/**
 * Every event of a session, in commit order, read page by page (those committed after the
 * commit cursor `after`, if given: the session's tail).
 */
export async function readWholeSession(
  store: EventStore,
  sessionId: string,
  pageSize = PAGE,
  after = 0,
): Promise<LedgerEvent[]> {
  assertEventStore(store);
  const events: LedgerEvent[] = [];
  for (;;) {
    const page = await store.readSession({ sessionId, after, limit: pageSize });
    for (const event of page.events) events.push(event);
    if (page.events.length < pageSize) return events;
    after = page.nextCursor;
  }
}
