import { BlobCache, type EventStore, type LedgerEvent, resolveEvents } from "@agent-ledger/core";

/**
 * A page of events stops once its JSON passes this many bytes (with at least one event): with
 * their content put back, each model request of a long conversation holds all of it (300 calls
 * made one answer of 228 MB, 700 a string longer than V8 makes).
 */
export const PAGE_BYTES = 8 * 1024 * 1024;
/** Events resolved at a time while a page fills: a few, so little more is read than is sent. */
const RESOLVE_BATCH = 16;
/** Events read at a time while looking for one by id. */
const SCAN_PAGE = 5000;

/**
 * The JSON of a page of session `sessionId`'s events after commit cursor `after` (at most
 * `limit`), with their content put back unless `raw`: as many as fit in PAGE_BYTES (one at
 * least); `nextCursor` is the last one's cursor, and `truncated: true` says that events were
 * left for the next request (which passes `nextCursor` as `after`). `count`: the events in it.
 */
export async function eventPageJson(
  store: EventStore,
  request: { sessionId: string; after: number; limit: number; raw: boolean },
): Promise<{ json: string; count: number }> {
  const { sessionId, after, limit } = request;
  const { events } = await store.readSession({ sessionId, after, limit });
  const cache = new BlobCache();
  const parts: string[] = [];
  let bytes = 0;
  let nextCursor = after;
  let truncated = false;
  fill: for (let start = 0; start < events.length; start += RESOLVE_BATCH) {
    const batch = events.slice(start, start + RESOLVE_BATCH);
    // Payloads as recorded: content kept in the blob store is put back in place, and a lost
    // blob's marker stays where its content was, listed in missingBlobs.
    const shown = request.raw
      ? batch
      : await resolveEvents(store, batch, { cache, missingBlobs: "keep" });
    for (const event of shown) {
      const json = JSON.stringify(event);
      const size = Buffer.byteLength(json);
      if (parts.length > 0 && bytes + size > PAGE_BYTES) {
        truncated = true;
        break fill;
      }
      parts.push(json);
      bytes += size + 1;
      nextCursor = event.commitCursor;
    }
  }
  const missing = cache.missing.size > 0 ? [...cache.missing].sort() : undefined;
  const json = `{"events":[${parts.join(",")}],"nextCursor":${nextCursor}${truncated ? ',"truncated":true' : ""}${missing ? `,"missingBlobs":${JSON.stringify(missing)}` : ""}}`;
  return { json, count: parts.length };
}

/**
 * The event `eventId` of session `sessionId` with its content put back (a lost blob's marker
 * kept), or undefined: the page asks for an event it holds no cursor of (the cause of an event
 * of a custom type) this way. Read in commit order until found.
 */
export async function findEvent(
  store: EventStore,
  sessionId: string,
  eventId: string,
): Promise<LedgerEvent | undefined> {
  for (let after = 0; ; ) {
    const page = await store.readSession({ sessionId, after, limit: SCAN_PAGE });
    const found = page.events.find((event) => event.eventId === eventId);
    if (found) {
      const [event] = await resolveEvents(store, [found], { missingBlobs: "keep" });
      return event;
    }
    if (page.events.length < SCAN_PAGE) return undefined;
    after = page.nextCursor;
  }
}
