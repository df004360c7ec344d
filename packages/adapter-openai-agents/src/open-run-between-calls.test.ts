import { inspectSession, LedgerError, readWholeSession, SessionRecorder } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { FailingStore } from "./testing/failing-store.js";
import { fixture } from "./testing/fixture.js";
import { runOptions } from "./testing/recorded-run.js";
import { scriptedProvider } from "./testing/scripted-model.js";

setTracingDisabled(true);

// The first process runs in a child recording to a SQLite file and is SIGKILLed right after the
// charge's tool.completed committed, before the next model call was requested: the run is open
// with no call in flight. The test is the new process, a restarted worker calling runWithLedger
// as it did at first, without the crashed run's runId.
const ledgers = new CrashedLedgers("oa-open-run-between-calls-", { beforeAll, afterAll });
ledgers.prepare("shop: dies after charge completed");

function newRunOptions(made: ReturnType<typeof fixture>) {
  return { sessionId: "s", modelProvider: scriptedProvider(made.model) };
}

async function refusal(run: Promise<unknown>): Promise<unknown> {
  return run.then(() => undefined).catch((thrown: unknown) => thrown);
}

describe("runWithLedger without a runId, on a session holding a run a crash left open between calls", () => {
  test("is refused with conflict naming the run and its last call: nothing written, nothing charged again", async () => {
    const { store, path, first } = await ledgers.crashed("shop: dies after charge completed");
    expect(first.effects).toEqual(["lookup book", "charge 7"]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
    const before = await readWholeSession(store, "s");

    // A new run would look the book up and charge the card again.
    const again = fixture();
    const error = await refusal(
      runWithLedger(again.main, "sell a book", { store, ...newRunOptions(again) }),
    );
    expect(LedgerError.isInstance(error, "conflict")).toBe(true);
    expect(error).toMatchObject({
      details: {
        sessionId: "s",
        runId: "root",
        calls: 4,
        lastCall: {
          runId: "root",
          kind: "tool",
          name: "charge",
          toolCallId: "call_charge",
          status: "completed",
        },
      },
    });
    expect((error as Error).message).toContain(
      `session s holds run root, left open with no call in flight after 4 call(s) (the last: tool call charge (call_charge) (completed))`,
    );
    expect((error as Error).message).toContain(
      `call resumeRun(agent, { store, sessionId: "s", runId: "root" })`,
    );
    expect((error as Error).message).toContain(`\`agent-ledger inspect --store sqlite:${path}`);
    expect(again.effects).toEqual([]);
    expect(again.model.calls).toBe(0);
    expect(await readWholeSession(store, "s")).toEqual(before);

    // What the message says: the run goes on from the ledger, the charge not made again.
    again.model.calls = 2;
    const done = await resumeRun(again.main, runOptions(store, again.model));
    expect(done.status).toBe("completed");
    expect(done.finalOutput).toBe("sold for 7");
    expect(again.effects).toEqual([]);

    // Closed, it holds no new run back.
    const next = fixture();
    const started = await runWithLedger(next.main, "sell a book", {
      store,
      ...newRunOptions(next),
    });
    expect(started.status).toBe("completed");
    expect(started.runId).not.toBe("root");
  });

  test("closed as the message says (cancelRun), it no longer holds new runs back", async () => {
    const { store } = await ledgers.crashed("shop: dies after charge completed");
    const again = fixture();
    const error = await refusal(
      runWithLedger(again.main, "sell a book", { store, ...newRunOptions(again) }),
    );
    expect((error as Error).message).toContain(
      `(await SessionRecorder.resume({ store, sessionId: "s", runId: "root", actor: { type: "human", id: "you" } })).cancelRun("why")`,
    );
    const crashed = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "root",
      actor: { type: "human", id: "you" },
    });
    await crashed.cancelRun("the order was sold by hand");

    const started = await runWithLedger(again.main, "sell a book", {
      store,
      ...newRunOptions(again),
    });
    expect(started.status).toBe("completed");
    expect(again.effects).toEqual(["lookup book", "charge 7"]);
  });

  test("a runId of the caller's own starts another run beside it (the explicit choice)", async () => {
    const { store } = await ledgers.crashed("shop: dies after charge completed");
    const beside = fixture();
    const result = await runWithLedger(beside.main, "sell a book", {
      store,
      ...newRunOptions(beside),
      runId: "second",
    });
    expect(result.status).toBe("completed");
    const runs = await store.listRuns("s");
    expect(runs.map((run) => [run.runId, run.status])).toEqual(
      expect.arrayContaining([
        ["root", "running"],
        ["second", "completed"],
      ]),
    );
  });
});

describe("runWithLedger without a runId, after the ledger failed between calls", () => {
  test("the app's retry is refused: the run left open is resumed, the charge not made again", async () => {
    const store = new FailingStore();
    const first = fixture();
    // The store goes away once the charge completed: the next model call's request cannot commit.
    let charged = false;
    store.failWhen = (request) => {
      if (
        request.events.some(
          (event) =>
            event.type === "tool.completed" &&
            event.payload &&
            (event.payload as { toolCallId?: string }).toolCallId === "call_charge",
        )
      )
        charged = true;
      return charged && request.events.some((event) => event.type === "model.requested");
    };
    const failure = await refusal(
      runWithLedger(first.main, "sell a book", { store, ...newRunOptions(first) }),
    );
    expect(LedgerError.isInstance(failure, "store-unavailable")).toBe(true);
    expect(first.effects).toEqual(["lookup book", "charge 7"]);
    store.failWhen = undefined;
    const [open] = await store.listRuns("s");

    // The app retries as it started: refused, nothing charged again.
    const retry = fixture();
    const error = await refusal(
      runWithLedger(retry.main, "sell a book", { store, ...newRunOptions(retry) }),
    );
    expect(error).toMatchObject({
      code: "conflict",
      details: { runId: open?.runId, lastCall: { name: "charge", status: "completed" } },
    });
    expect(retry.effects).toEqual([]);

    retry.model.calls = 2;
    const done = await resumeRun(retry.main, {
      store,
      ...newRunOptions(retry),
      runId: open?.runId as string,
    });
    expect(done.finalOutput).toBe("sold for 7");
    expect(retry.effects).toEqual([]);
  });
});
