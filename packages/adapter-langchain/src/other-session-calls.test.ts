import { join } from "node:path";
import {
  type EventStore,
  findLedgerError,
  inspectSession,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it, type TestContext, vi } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { lines, runEvents } from "./testing/helpers.js";
import {
  type PayGraph,
  payWorld,
  RUN,
  SESSION,
  THREAD,
} from "./testing/other-session-calls.test.data.js";
import { threadRunId } from "./thread-run-id.js";
import { THREAD_RECORDED_TYPE, THREAD_SESSIONS } from "./thread-sessions.js";

const scratch = scratchDirectory("langchain-other-session-", { beforeAll, afterAll });
/** The session a resumed process was built with by mistake (a typo, a setting left out). */
const WRONG = `${SESSION}-typo`;

/** A child records in SESSION and is SIGKILLed inside pay, once it paid. */
async function crashedInsidePay(name: string, graph: PayGraph, context: TestContext) {
  const files = {
    payments: join(scratch, `${name}.payments.log`),
    saverPath: join(scratch, `${name}.checkpoints.db`),
  };
  const db = join(scratch, `${name}.db`);
  await crashInChild(
    "other-session-calls:pay-in-flight",
    db,
    files.payments,
    graph,
    files.saverPath,
  );
  const store = await openLedger(db, context.onTestFinished);
  /** One process's world on the crashed ledger, in `sessionId`. */
  const world = (sessionId: string) => {
    const built = payWorld({ store, sessionId, graph, ...files });
    context.onTestFinished(() => built.close());
    return built;
  };
  return { store, payments: files.payments, world };
}

/** The sessions named as having recorded `threadId`, in the order they first did. */
async function sessionsOf(store: EventStore, threadId: string) {
  const events = await readWholeRun(store, {
    sessionId: THREAD_SESSIONS,
    runId: threadRunId(threadId),
  });
  return events.flatMap((event) =>
    event.type === THREAD_RECORDED_TYPE ? [(event.payload as { sessionId: string }).sessionId] : [],
  );
}

/** A person abandons SESSION's one unresolved call (pay): they checked, it went through. */
async function abandonPay(store: EventStore) {
  const person = await SessionRecorder.resume({
    store,
    sessionId: SESSION,
    runId: RUN,
    actor: { type: "human", id: "ops" },
  });
  const [unresolved] = (await inspectSession(store, SESSION)).unresolved;
  if (unresolved?.name !== "pay") throw new Error("pay is not unresolved");
  await person.abandon(unresolved, "the bank shows the payment");
}

describe.concurrent("a thread resumed under another session than the one that recorded it", () => {
  for (const graph of ["agent", "graph"] as const) {
    const saver = graph === "agent" ? "the ledger's saver" : "LangGraph's SqliteSaver";
    it(`${graph} on ${saver}: another sessionId is refused before pay runs again; the right one resumes`, async (context) => {
      const { store, payments, world } = await crashedInsidePay(`wrong-${graph}`, graph, context);
      expect(lines(payments)).toBe(1);

      // Resumed with another sessionId, twice: refused both times, pay not run again.
      for (let resume = 0; resume < 2; resume++) {
        const wrong = world(WRONG);
        const { error } = (await wrong.resume()) as { error?: unknown };
        expect(lines(payments)).toBe(1);
        const refusal = findLedgerError(error, "invalid-argument");
        expect(refusal?.path).toBe("$.sessionId");
        expect(refusal?.details).toMatchObject({
          sessionId: SESSION,
          runId: RUN,
          handlerSessionId: WRONG,
          threadId: THREAD,
          toolCallId: "call-pay-1",
          name: "pay",
        });
        expect(refusal?.message).toContain(`Build the handler with sessionId "${SESSION}"`);
        expect(wrong.model.calls).toHaveLength(0);
      }
      const wrongEvents = await runEvents(store, WRONG, RUN);
      expect(wrongEvents.filter((event) => event.type === "tool.requested")).toEqual([]);

      // The right sessionId: pay, in flight at the crash, waits for a person.
      const stopped = (await world(SESSION).resume()) as { error?: unknown };
      expect(findLedgerError(stopped.error, "unresolved-attempt")?.details.name).toBe("pay");
      expect(lines(payments)).toBe(1);
      await abandonPay(store);
      const { answer } = (await world(SESSION).afterDecision()) as { answer?: string };
      expect(answer).toContain("the bank shows the payment");
      expect(lines(payments)).toBe(1);
    });
  }

  for (const graph of ["agent", "graph"] as const) {
    it(`${graph}: a new thread runs under any session, and so does a new task on a thread another session recorded`, async (context) => {
      const store = new MemoryEventStore();
      const payments = join(scratch, `new-thread-${graph}.payments.log`);
      const saverPath = join(scratch, `new-thread-${graph}.checkpoints.db`);
      const world = (sessionId: string) => {
        const built = payWorld({ store, sessionId, graph, payments, saverPath });
        context.onTestFinished(() => built.close());
        return built;
      };
      const first = await world(SESSION).start();
      expect(first.messages.at(-1)?.content).toBe("done: paid 5");
      // Another session, a thread no session recorded.
      const other = world(WRONG);
      const fresh = await other.start("fresh-thread");
      expect(fresh.messages.at(-1)?.content).toBe("done: paid 5");
      // The same handler, a new task on SESSION's thread: its own turn, which it records.
      const moved = await other.start();
      expect(moved.messages.at(-1)?.content).toBe("done: paid 5");
      expect(lines(payments)).toBe(3);
      expect(await sessionsOf(store, THREAD)).toEqual([SESSION, WRONG]);
      expect(await sessionsOf(store, "fresh-thread")).toEqual([WRONG]);
    });
  }

  it("a thread whose record was closed (prune --cancel-open that deleted nothing) still runs under another session", async ({
    onTestFinished,
  }) => {
    const store = new MemoryEventStore();
    const payments = join(scratch, "closed-record.payments.log");
    const world = (sessionId: string) => {
      const built = payWorld({ store, sessionId, graph: "agent", payments, saverPath: "" });
      onTestFinished(() => built.close());
      return built;
    };
    await world(SESSION).start();
    const ops = await SessionRecorder.resume({
      store,
      sessionId: THREAD_SESSIONS,
      runId: threadRunId(THREAD),
      actor: { type: "human", id: "ops" },
    });
    await ops.cancelRun("pruned");
    const moved = await world(WRONG).start();
    expect(moved.messages.at(-1)?.content).toBe("done: paid 5");
    expect(lines(payments)).toBe(2);
    expect(await sessionsOf(store, THREAD)).toEqual([SESSION]);
  });

  it("the normal path reads the thread's sessions once per handler and thread, names a session once per thread, and reads no session whole", async ({
    onTestFinished,
  }) => {
    const store = new MemoryEventStore();
    const readRun = vi.spyOn(store, "readRun");
    const append = vi.spyOn(store, "append");
    const readSession = vi.spyOn(store, "readSession");
    const ofThreads = (spy: typeof readRun | typeof append) =>
      spy.mock.calls.filter(([request]) => request.sessionId === THREAD_SESSIONS).length;
    const payments = join(scratch, "cost.payments.log");
    const world = () => {
      const built = payWorld({
        store,
        sessionId: SESSION,
        graph: "agent",
        payments,
        saverPath: "",
      });
      onTestFinished(() => built.close());
      return built;
    };
    const handler = world();
    for (let turn = 0; turn < 3; turn++) await handler.start();
    expect(ofThreads(readRun)).toBe(1);
    expect(ofThreads(append)).toBe(1);
    // A new process on the same session and run: one read, nothing appended.
    await world().start();
    expect(ofThreads(readRun)).toBe(2);
    expect(ofThreads(append)).toBe(1);
    expect(readSession).not.toHaveBeenCalled();
    expect(lines(payments)).toBe(4);
  });
});
