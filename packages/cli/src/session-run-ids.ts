import { type EventPage, type EventStore, LedgerError } from "@agent-ledger/core";

/**
 * The ids of a session's runs in the order their first readable event was committed, found in
 * its events (`readSession`) rather than in `listRuns`. For a caller that must reach every run
 * when `listRuns` cannot answer: on SQLite it reads each open run's head from its last event,
 * and one such event that no longer decodes fails the whole listing. `readSession` decodes the
 * same bodies, so an event that cannot be read is stepped over here (the events before it on
 * its page are read again without it): a run is found by any readable event of its own. A run
 * none of whose events can be read is not found.
 */
export async function sessionRunIds(
  store: EventStore,
  sessionId: string,
  options: { pageSize?: number } = {},
): Promise<string[]> {
  const pageSize = options.pageSize ?? 2000;
  const runIds = new Set<string>();
  let after = 0;
  let limit = pageSize;
  for (;;) {
    let page: EventPage;
    try {
      page = await store.readSession({ sessionId, after, limit });
    } catch (error) {
      const bad = unreadableCursor(error);
      if (bad === undefined || bad <= after || bad > after + limit) throw error;
      if (bad === after + 1) {
        after = bad;
        limit = pageSize;
      } else limit = bad - 1 - after; // The events before it, then it again at after + 1.
      continue;
    }
    for (const event of page.events) runIds.add(event.runId);
    if (page.events.length < limit) return [...runIds];
    after = page.nextCursor;
    limit = pageSize;
  }
}

/** The commit cursor of the event a read's `tamper-detected` says cannot be read (unreadableEvent). */
function unreadableCursor(error: unknown): number | undefined {
  if (!LedgerError.isInstance(error, "tamper-detected")) return undefined;
  const cursor = error.details.commitCursor;
  return typeof cursor === "number" ? cursor : undefined;
}
