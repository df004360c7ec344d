import { MemoryEventStore } from "@agent-ledger/core";
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
