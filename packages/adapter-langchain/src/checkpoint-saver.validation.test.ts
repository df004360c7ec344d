import { join } from "node:path";
import { type EventStore, MemoryEventStore, openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import * as vitest from "vitest";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";

// The public suite is written against Jest-style globals; this project does not enable them.
const { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, test } = vitest;
Object.assign(globalThis, {
  afterAll,
  afterEach,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  test,
});
const { validate } = await import("@langchain/langgraph-checkpoint-validation");

// A fresh store per checkpointer: the suite requires isolated instances.
validate({
  checkpointerName: "LedgerCheckpointSaver (memory store)",
  createCheckpointer: () => new LedgerCheckpointSaver({ store: new MemoryEventStore() }),
});

// The same suite on a real SQLite file per checkpointer, removed when the suite destroys it.
const sqliteStores = new WeakMap<LedgerCheckpointSaver, { store: EventStore; remove(): void }>();
validate({
  checkpointerName: "LedgerCheckpointSaver (sqlite store)",
  createCheckpointer: async () => {
    let remove = () => {};
    const dir = scratchDirectory("ledger-saver-", (removeDirectory) => {
      remove = removeDirectory;
    });
    const store = await openStore(`sqlite:${join(dir, "saver.db")}`);
    const saver = new LedgerCheckpointSaver({ store });
    sqliteStores.set(saver, { store, remove });
    return saver;
  },
  destroyCheckpointer: async (saver) => {
    const entry = sqliteStores.get(saver);
    await entry?.store.close();
    entry?.remove();
  },
});

// Every thread evicted from the saver's memory between uses (cachedThreads: 1): each is read
// again from the store, as a new process reads it, and must answer the suite the same.
validate({
  checkpointerName: "LedgerCheckpointSaver (memory store, one thread cached)",
  createCheckpointer: () =>
    new LedgerCheckpointSaver({ store: new MemoryEventStore(), cachedThreads: 1 }),
});
