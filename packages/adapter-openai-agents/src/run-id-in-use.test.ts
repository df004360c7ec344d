import { join } from "node:path";
import { ConflictError, RunClosedError, readWholeSession } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { fixture } from "./testing/fixture.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

const scratch = scratchDirectory("oa-run-id-in-use-", { beforeAll, afterAll });
let files = 0;

async function sqliteStore(): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(scratch, `ledger-${++files}.db`) });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

// An app that calls runWithLedger again with a runId the session holds (a restarted worker that
// starts its task again instead of resuming it) is told so in this adapter's terms, with what to
// call, and nothing is written.
describe("runWithLedger on a runId the session already holds", () => {
  test("a run that completed: run-closed, naming resumeRun, not another writer's race", async () => {
    const store = await sqliteStore();
    const first = fixture();
    const done = await runWithLedger(first.main, "sell a book", runOptions(store, first.model));
    expect(done.status).toBe("completed");
    const recorded = (await readWholeSession(store, "s")).length;

    const again = fixture();
    const error = await runWithLedger(again.main, "sell a book", runOptions(store, again.model))
      .then(() => undefined)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(RunClosedError);
    expect(error).toMatchObject({
      code: "run-closed",
      details: { sessionId: "s", runId: "root", status: "completed" },
    });
    expect((error as Error).message).toBe(
      "run root of session s already exists and is completed: runWithLedger starts a new run, so nothing was written. resumeRun(agent, { store, sessionId, runId }) returns what it recorded; to start another run, give another runId (or none).",
    );
    expect(again.effects).toEqual([]);
    expect(await readWholeSession(store, "s")).toHaveLength(recorded);
    // What the message says to call.
    const resumed = await resumeRun(again.main, runOptions(store, again.model));
    expect(resumed.finalOutput).toBe("sold for 7");
    expect(again.effects).toEqual([]);
  });

  test("a run left open (its process stopped inside a tool): conflict, naming resumeRun", async () => {
    const store = await sqliteStore();
    // The first process stops inside the idempotent lookup and never comes back (as if it died).
    const stuck = fixture({ afterEffect: () => new Promise<void>(() => {}) });
    void runWithLedger(stuck.main, "sell a book", runOptions(store, stuck.model));
    await expect.poll(() => stuck.effects).toEqual(["lookup book"]);
    const recorded = (await readWholeSession(store, "s")).length;

    const again = fixture();
    const error = await runWithLedger(again.main, "sell a book", runOptions(store, again.model))
      .then(() => undefined)
      .catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "conflict", expectedSeq: 0, actualSeq: recorded });
    expect((error as Error).message).toBe(
      `run root of session s already has ${recorded} events: runWithLedger starts a new run, so nothing was written. To continue it (a process died while it ran), call resumeRun(agent, { store, sessionId, runId }); to start another run beside it, give another runId.`,
    );
    expect(again.effects).toEqual([]);
    expect(await readWholeSession(store, "s")).toHaveLength(recorded);
    const resumed = await resumeRun(again.main, runOptions(store, again.model));
    expect(resumed.status).toBe("completed");
    expect(again.effects.filter((effect) => effect === "charge 7")).toHaveLength(1);
  });
});
