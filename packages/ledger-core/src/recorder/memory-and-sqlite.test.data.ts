import { join } from "node:path";
import type { EventStore } from "../store/event-store.js";
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
