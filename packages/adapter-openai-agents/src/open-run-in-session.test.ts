import { join } from "node:path";
import { inspectSession, LedgerError, readWholeSession } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { pastedCommand } from "./testing/agent-ledger-cli.js";
import { deletingAgent } from "./testing/approval-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { fixture } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { scriptedProvider } from "./testing/scripted-model.js";
import { agentToolFixture } from "./testing/writer-agent.js";

setTracingDisabled(true);

// Each crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed inside the charge, after it charged (testing/crash-scenarios.test.data.ts); the test
// is the new process, which calls runWithLedger again as a restarted worker does: without the
// crashed run's runId.
const ledgers = new CrashedLedgers("oa-open-run-in-session-", { beforeAll, afterAll });
ledgers.prepare("shop: dies inside charge");

const scratch = scratchDirectory("oa-open-run-paused-", { beforeAll, afterAll });

/** runWithLedger's options without a runId: a run with a generated one, in session "s". */
function newRunOptions(store: SqliteEventStore, made: ReturnType<typeof fixture>) {
  return { store, sessionId: "s", modelProvider: scriptedProvider(made.model) };
}

describe("runWithLedger without a runId, on a session holding a run a crash left open", () => {
  test("is refused with unresolved-attempt naming the run and its call in flight: nothing written, nothing charged again", async () => {
    const { store, path, first } = await ledgers.crashed("shop: dies inside charge");
    expect(first.effects).toEqual(["lookup book", "charge 7"]);
    const before = await readWholeSession(store, "s");
    const charge = (await inspectSession(store, "s")).unresolved[0];
    expect(charge?.name).toBe("charge");

    // A new run would make every call again: the charge (and the book's lookup) repeat.
    const again = fixture();
    const error = await runWithLedger(again.main, "sell a book", newRunOptions(store, again))
      .then(() => undefined)
      .catch((thrown: unknown) => thrown);
    expect(LedgerError.isInstance(error, "unresolved-attempt")).toBe(true);
    expect(error).toMatchObject({
      code: "unresolved-attempt",
      details: {
        sessionId: "s",
        runId: "root",
        attemptId: charge?.attemptId,
        unresolved: [
          {
            runId: "root",
            attemptId: charge?.attemptId,
            kind: "tool",
            name: "charge",
            toolCallId: "call_charge",
          },
        ],
      },
    });
    const storeOption = `--store sqlite:${path}`;
    expect((error as Error).message).toBe(
      `session s holds run root, left open by a process that stopped during tool call charge (call_charge), attempt ${charge?.attemptId}: the call may have had its effect, and a new run would make its calls again, so runWithLedger (given no runId) wrote nothing. To continue that run, call resumeRun(agent, { store, sessionId: "s", runId: "root" }). If it is not to go on, check the call's effect and decide it: \`agent-ledger resolve --abandon "what you found" ${storeOption} -- s ${charge?.attemptId}\`, then call runWithLedger again. If it is still running in another process, or to start another run beside it anyway, give runWithLedger a runId of your own. \`agent-ledger inspect ${storeOption} -- s\` shows the run.`,
    );
    expect(again.effects).toEqual([]);
    expect(again.model.calls).toBe(0);
    expect(await readWholeSession(store, "s")).toEqual(before);

    // What the message says: the run goes on, asking about the charge instead of making it again.
    const paused = await resumeRun(again.main, runOptions(store, again.model));
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    const { state, item } = firstInterruption(paused);
    state.reject(item, { message: "charged already: do not charge again" });
    again.model.calls = 2;
    const done = await resumeRun(again.main, { ...runOptions(store, again.model), state });
    expect(done.status).toBe("completed");
    expect(again.effects).toEqual([]);

    // The run is closed now: a new run starts.
    const next = fixture();
    const started = await runWithLedger(next.main, "sell a book", newRunOptions(store, next));
    expect(started.status).toBe("completed");
    expect(started.runId).not.toBe("root");
  });

  test("decided with the command the refusal prints, the call no longer holds new runs back", async () => {
    const { store } = await ledgers.crashed("shop: dies inside charge");
    const again = fixture();
    const refusal = await runWithLedger(again.main, "sell a book", newRunOptions(store, again))
      .then(() => undefined)
      .catch((thrown: unknown) => thrown as Error);
    expect(refusal?.message).toContain("runWithLedger (given no runId) wrote nothing");

    // The command as printed, pasted into a shell elsewhere (no $AGENT_LEDGER_STORE).
    const printed = /`(agent-ledger resolve [^`]*)`/.exec(refusal?.message ?? "")?.[1] ?? "";
    const resolved = await pastedCommand(printed, scratch);
    expect(resolved).toMatchObject({ code: 0, stderr: "" });
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);

    const next = fixture();
    const started = await runWithLedger(next.main, "sell a book", newRunOptions(store, next));
    expect(started.status).toBe("completed");
    expect(started.runId).not.toBe("root");
  });

  test("resumed and paused asking about the charge, it still holds new runs back: the charge may have happened", async () => {
    const { store } = await ledgers.crashed("shop: dies inside charge");
    const again = fixture();
    const paused = await resumeRun(again.main, runOptions(store, again.model));
    expect(paused.inFlightAtCrash.map(({ item }) => item.name)).toEqual(["charge"]);
    const error = await runWithLedger(again.main, "sell a book", newRunOptions(store, again))
      .then(() => undefined)
      .catch((thrown: unknown) => thrown);
    expect(LedgerError.isInstance(error, "unresolved-attempt")).toBe(true);
    expect(again.effects).toEqual([]);
  });

  test("a runId of the caller's own starts another run beside it (the explicit choice)", async () => {
    const { store } = await ledgers.crashed("shop: dies inside charge");
    const beside = fixture();
    const result = await runWithLedger(beside.main, "sell a book", {
      ...newRunOptions(store, beside),
      runId: "second",
    });
    expect(result.status).toBe("completed");
    expect(beside.effects).toEqual(["lookup book", "charge 7"]);
    // The crashed run is left as it was, its charge still to decide.
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved.map((attempt) => [attempt.runId, attempt.name])).toEqual([
      ["root", "charge"],
    ]);
  });
});

describe("runWithLedger without a runId, on a session holding a run paused at an approval", () => {
  test("starts: a paused run has no call in flight, nothing of it can run twice", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "paused.db") });
    await store.init();
    onTestFinished(() => store.close());
    const made = deletingAgent();
    const paused = await runWithLedger(made.agent, "clean up", runOptions(store, made.model));
    expect(paused.status).toBe("interrupted");

    const other = deletingAgent();
    const next = await runWithLedger(other.agent, "clean up", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(other.model),
    });
    expect(next.status).toBe("interrupted");
    expect(next.runId).not.toBe("root");
  });

  test("paused inside an agent tool (its agent's call awaits approval): starts, the agent tool call waiting with the pause is no call in flight", async () => {
    const store = new SqliteEventStore({ path: join(scratch, "paused-inside.db") });
    await store.init();
    onTestFinished(() => store.close());
    const made = agentToolFixture();
    const paused = await runWithLedger(made.main, "write hello", runOptions(store, made.model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["write"]);
    // The agent tool call is open while the run waits: not lost in a crash.
    expect((await inspectSession(store, "s")).runs[0]?.awaitingDecision).toBeDefined();

    const other = agentToolFixture();
    const next = await runWithLedger(other.main, "write hello", {
      store,
      sessionId: "s",
      modelProvider: scriptedProvider(other.model),
    });
    expect(next.status).toBe("interrupted");
    expect(next.runId).not.toBe("root");
  });
});
