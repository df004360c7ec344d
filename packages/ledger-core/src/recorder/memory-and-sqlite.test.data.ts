import { join } from "node:path";
import { LedgerError } from "../events/errors.js";
import type { AppendRequest, EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";

/**
 * The recorder's tests that run on both embedded stores, for `describe.each`: a fresh memory
 * store, and a fresh SQLite file in `dir` (initialised), each call a store of its own.
 */
export function memoryAndSqlite(dir: string): [string, () => Promise<EventStore>][] {
  return [
    ["memory", async () => new MemoryEventStore()],
    [
      "sqlite",
      async () => {
        const store = new SqliteEventStore({ path: join(dir, `${crypto.randomUUID()}.db`) });
        await store.init();
        return store;
      },
    ],
  ];
}

/**
 * `store` with every append it is asked for noted (in order), and, while `loseReplies` is above
 * zero, an append that commits and then fails as if its reply were lost (`store-unavailable`):
 * with the commit queue's own retries (three tries in all), 3 makes the call reject.
 */
export function watched(store: EventStore) {
  const appends: AppendRequest[] = [];
  const faults = { loseReplies: 0 };
  const append = store.append.bind(store);
  store.append = async (request) => {
    appends.push(request);
    const result = await append(request);
    if (faults.loseReplies > 0) {
      faults.loseReplies--;
      throw new LedgerError("store-unavailable", "connection reset after commit");
    }
    return result;
  };
  return { appends, faults };
}
