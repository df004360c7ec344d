// The ledger the research agent's tests read: its runs, and the SQLite files its crash
// scenarios leave, each scenario run in a child process killed at its crash point.
import { join } from "node:path";
import { type EventStore, type LedgerEvent, readWholeSession } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, onTestFinished } from "vitest";
import { crashInChild } from "./crash-in-child.test.data.js";
import type { CrashScenarioName } from "./crash-scenarios.test.data.js";
import { RESEARCH } from "./research-agent.test.data.js";

/** The types of `events`, in order. */
export const types = (events: LedgerEvent[]) => events.map((event) => event.type);

/** The agent's run, and the events of the other runs: the child run of its research call. */
export async function researchRuns(store: EventStore) {
  const events = await readWholeSession(store, RESEARCH.sessionId);
  const root = events.filter((event) => event.runId === RESEARCH.runId);
  const child = events.filter((event) => event.runId !== RESEARCH.runId);
  return { root, child };
}

/**
 * For a test file (call it at its top): a function that runs crash scenarios one after the
 * other on a new SQLite ledger in the file's scratch directory, and opens that ledger (closed
 * when the test ends).
 */
export function crashedLedgers(prefix: string) {
  const scratch = scratchDirectory(prefix, { beforeAll, afterAll });
  let crashes = 0;
  return async (...scenarios: CrashScenarioName[]): Promise<SqliteEventStore> => {
    const path = join(scratch, `crash-${++crashes}.db`);
    for (const scenario of scenarios) await crashInChild(scenario, path);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    return store;
  };
}
