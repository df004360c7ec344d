import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type EventStore, MemoryEventStore, openStore } from "@agent-ledger/core";
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

// The same suite on a real SQLite file per checkpointer.
const sqliteStores = new WeakMap<LedgerCheckpointSaver, EventStore>();
validate({
  checkpointerName: "LedgerCheckpointSaver (sqlite store)",
  createCheckpointer: async () => {
    const dir = mkdtempSync(join(tmpdir(), "ledger-saver-"));
    const store = await openStore(`sqlite:${join(dir, "saver.db")}`);
    const saver = new LedgerCheckpointSaver({ store });
    sqliteStores.set(saver, store);
    return saver;
  },
  destroyCheckpointer: async (saver) => {
    await sqliteStores.get(saver)?.close();
  },
});
