import type { EventStore, SeqGaps } from "@agent-ledger/core";
import { withReadSession } from "./store.js";

/** `store` with each page its `readSession` answers told to `gaps` (core's `SeqGaps`). */
export function readsToldTo(store: EventStore, gaps: SeqGaps): EventStore {
  return withReadSession(store, async (request, readSession) => {
    const page = await readSession(request);
    gaps.add(page.events);
    return page;
  });
}
