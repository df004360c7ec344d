import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { LedgerError } from "../events/errors.js";
import { inspectSession } from "../inspect/inspect-session.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { runUntilKilled } from "../testing/killed-child.test.data.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

// completeRun refuses (`unresolved-attempt`, nothing written) while the run holds a call a
// crash left in flight that the resume neither ran again nor resolved: a completed run takes no
// more events and is never resumed, and the call would stay "may or may not have happened" for
// good. failRun and cancelRun still close the run; calls made in this process are not refused.

const dir = scratchDirectory("agent-ledger-complete-open-", { beforeAll, afterAll });
let files = 0;

const core = new URL("../../dist/index.js", import.meta.url).href;
const sqlite = new URL("../../dist/stores/sqlite/index.js", import.meta.url).href;

const address = { sessionId: "s", runId: "r", actor: { type: "agent", id: "shop" } } as const;
const read = { kind: "read", idempotent: true } as const;
const pays = { kind: "write", idempotent: false } as const;

// The agent process: a model call asks for two tools, run in parallel; the process is killed
// while both are out: `stock` (idempotent) and `pay` (not idempotent).
const agent = `
const { SessionRecorder } = await import(${JSON.stringify(core)});
const { SqliteEventStore } = await import(${JSON.stringify(sqlite)});
const store = new SqliteEventStore({ path: process.argv[1] });
await store.init();
const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor: { type: "agent", id: "shop" } });
await recorder.startRun();
const model = await recorder.beforeModelCall({ request: { prompt: "buy" } });
await recorder.modelCompleted(model, { toolCalls: ["stock", "pay"] });
await Promise.all([
  recorder.beforeToolCall({ toolCallId: "c1", name: "stock", args: {}, effect: { kind: "read", idempotent: true } }),
  recorder.beforeToolCall({ toolCallId: "c2", name: "pay", args: { amount: 5 }, effect: { kind: "write", idempotent: false } }),
]);
process.stdout.write("in-flight\\n");
setInterval(() => {}, 1000);
`;

async function sqliteStore(): Promise<{ path: string; store: SqliteEventStore }> {
  const path = join(dir, `ledger-${++files}.db`);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { path, store };
}

/**
 * The agent killed with both calls out, then its run re-executed in this process up to them,
 * through `wrap(store)` if given: stock is run again, pay refused.
 */
async function crashedThenResumed(wrap: (store: EventStore) => EventStore = (store) => store) {
  const path = join(dir, `crash-${++files}.db`);
  await runUntilKilled(agent, [path], "in-flight");
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  const resumed = await SessionRecorder.resume({ store: wrap(store), ...address });
  await resumed.startRun();
  expect((await resumed.beforeModelCall({ request: { prompt: "buy" } })).replayed).toBeDefined();
  const [stock, pay] = await Promise.allSettled([
    resumed.beforeToolCall({ toolCallId: "c1", name: "stock", args: {}, effect: read }),
    resumed.beforeToolCall({ toolCallId: "c2", name: "pay", args: { amount: 5 }, effect: pays }),
  ]);
  if (stock.status !== "fulfilled" || pay.status !== "rejected")
    throw new Error("stock is retried and pay refused");
  // stock ran again and answered: its first attempt is retried, no longer in flight.
  await resumed.toolCompleted(stock.value, "in stock");
  return { store, resumed, refusal: pay.reason as LedgerError & { attempt: Attempt } };
}

const runEnds = async (store: EventStore) =>
  (await readWholeRun(store, address)).filter((event) => event.type.startsWith("run."));

describe("completeRun while a call of the run has no outcome", () => {
  it("refuses a call a crash left in flight, naming it; a person's abandonment then lets it complete", async () => {
    const { store, resumed, refusal } = await crashedThenResumed();
    expect(LedgerError.isInstance(refusal, "unresolved-attempt")).toBe(true);
    const length = resumed.length;

    const error = await resumed.completeRun({ answer: "paid?" }).catch((thrown: unknown) => thrown);
    expect(LedgerError.isInstance(error, "unresolved-attempt")).toBe(true);
    // Only pay: stock's first attempt was retried, and its retry answered.
    expect(error).toMatchObject({
      attemptId: refusal.details.attemptId,
      attempt: { name: "pay", toolCallId: "c2", kind: "tool", runId: "r", request: { amount: 5 } },
      details: {
        runId: "r",
        unresolved: [{ attemptId: refusal.details.attemptId, kind: "tool", name: "pay" }],
      },
    });
    expect((error as Error).message).toContain("run r cannot be completed");
    expect((error as Error).message).toContain(
      `tool call pay (c2) attempt ${refusal.details.attemptId}`,
    );
    // Nothing written: the run is open, its length the same, and it can be resumed.
    expect(resumed.length).toBe(length);
    expect(resumed.status).toBe("running");
    expect((await readWholeRun(store, address)).length).toBe(length);
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.status).toBe("running");
    expect(inspection.unresolved.map((attempt) => attempt.name)).toEqual(["pay"]);

    // The attempt the error carries is the one to decide on.
    await resumed.abandon((error as { attempt: never }).attempt, "the bank says it was paid");
    await resumed.completeRun({ answer: "paid" });
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("completed");
  });

  it("refuses a completion written with record() alike", async () => {
    const { store, resumed } = await crashedThenResumed();
    const length = resumed.length;
    const error = await resumed
      .record({ type: "run.completed", payload: { output: "paid?" } })
      .catch((thrown: unknown) => thrown);
    expect(LedgerError.isInstance(error, "unresolved-attempt")).toBe(true);
    expect(error).toMatchObject({ details: { unresolved: [{ name: "pay" }] } });
    expect(resumed.status).toBe("running");
    expect((await readWholeRun(store, address)).length).toBe(length);
    // Other events still go in: a custom one, and a failure through record() closes the run.
    await resumed.record({ type: "x.note", payload: { text: "pay is unresolved" } });
    await resumed.record({ type: "run.failed", payload: { error: { message: "pay" } } });
    expect((await runEnds(store)).at(-1)?.type).toBe("run.failed");
  });

  it("still fails or cancels a run with a call left in flight", async () => {
    const failed = await crashedThenResumed();
    await failed.resumed.failRun(new Error("pay is unresolved"));
    expect((await runEnds(failed.store)).at(-1)?.type).toBe("run.failed");

    const cancelled = await crashedThenResumed();
    await cancelled.resumed.cancelRun("a person will check pay");
    expect((await runEnds(cancelled.store)).at(-1)?.type).toBe("run.cancelled");
  });

  it("does not refuse calls made in this process that have no outcome yet", async () => {
    const { store } = await sqliteStore();
    const recorder = new SessionRecorder({ store, ...address });
    await recorder.startRun();
    await recorder.beforeModelCall({ request: { prompt: "buy" } });
    await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: {} });
    await expect(recorder.completeRun()).resolves.toMatchObject({ type: "run.completed" });
  });

  it("counts an outcome made just before, whose append has not returned yet", async () => {
    // A store a network away: each append takes a while.
    const slow = (store: EventStore) =>
      new Proxy(store, {
        get(target, property) {
          if (property === "append")
            return async (...args: Parameters<EventStore["append"]>) => {
              await new Promise((resolve) => setTimeout(resolve, 30));
              return target.append(...args);
            };
          const value: unknown = Reflect.get(target, property, target);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
    const { resumed, refusal } = await crashedThenResumed(slow);
    const abandoned = resumed.abandon(refusal.attempt, "the bank says it was not paid");
    await expect(resumed.completeRun()).resolves.toMatchObject({ type: "run.completed" });
    await abandoned;
  });

  it("answers a re-executed loop with the end an earlier version recorded, call in flight and all", async () => {
    const { store } = await sqliteStore();
    const recorder = new SessionRecorder({ store, ...address });
    await recorder.startRun();
    await recorder.beforeToolCall({ toolCallId: "c1", name: "lookup", args: {} });
    // Written as completeRun wrote it before it looked for calls in flight.
    const end = await recorder.record({ type: "run.completed", payload: { output: "found" } });

    const resumed = await SessionRecorder.resume({ store, ...address });
    await expect(resumed.completeRun("found")).resolves.toMatchObject({ eventId: end.eventId });
  });
});
