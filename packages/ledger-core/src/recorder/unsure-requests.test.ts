import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import type { AppendRequest } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-unsure-", { beforeAll, afterAll });
const actor: Actor = { type: "agent", id: "refunds" };
const address = { sessionId: "s", runId: "r" };

/**
 * The real SQLite store behind a connection whose replies get lost: the next appends of an
 * event of type `type` commit and then fail (`store-unavailable`), `times` times: with the
 * queue's own retries (three tries in all), `times = 3` makes the call reject.
 */
class LosingStore extends SqliteEventStore {
  readonly #lose = new Map<string, number>();
  loseReplies(type: string, times = 3): void {
    this.#lose.set(type, times);
  }
  override async append(request: AppendRequest) {
    const result = await super.append(request);
    for (const event of request.events) {
      const times = this.#lose.get(event.type) ?? 0;
      if (times === 0) continue;
      this.#lose.set(event.type, times - 1);
      throw new LedgerError("store-unavailable", "connection reset after commit");
    }
    return result;
  }
}

async function open(file: string): Promise<LosingStore> {
  const store = new LosingStore({ path: join(dir, file) });
  await store.init();
  return store;
}

/** What a caller obeying "if before* rejects, do not make the call" does: try again later. */
async function untilRecorded<T>(call: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await call();
    } catch (error) {
      if (tries === 3 || !LedgerError.isInstance(error, "store-unavailable")) throw error;
    }
  }
}

/** A refund agent's loop; counts the calls it really made (paid for). */
async function refundLoop(recorder: SessionRecorder, made: { model: number; pay: number }) {
  const planRequest = { prompt: "refund order 7" };
  const plan = await untilRecorded(() => recorder.beforeModelCall({ request: planRequest }));
  if (plan.replayed === undefined) {
    made.model++;
    await recorder.modelCompleted(plan, { toolCalls: [{ id: "pay-1", name: "pay" }] });
  }
  const payRequest = { toolCallId: "pay-1", name: "pay", args: { order: 7, cents: 500 } };
  const pay = await untilRecorded(() => recorder.beforeToolCall(payRequest));
  if (pay.replayed === undefined) {
    made.pay++;
    await recorder.toolCompleted(pay, { refunded: 500 });
  }
  const answer = await untilRecorded(() =>
    recorder.beforeModelCall({ request: { prompt: "refund order 7", paid: 500 } }),
  );
  if (answer.replayed === undefined) {
    made.model++;
    await recorder.modelCompleted(answer, "Refunded 5.00");
  }
}

describe("a before* that rejected after its request got in, retried by the caller", () => {
  it("gets the stored request: one recorded call, none unresolved, and a resume replays them all", async () => {
    const store = await open("retried-requests.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const made = { model: 0, pay: 0 };
    // The plan's and the payment's requests get in, and every reply to them is lost.
    store.loseReplies("model.requested");
    store.loseReplies("tool.requested");
    await refundLoop(recorder, made);
    expect(made).toEqual({ model: 2, pay: 1 });
    const types = (await readWholeRun(store, address)).map((event) => event.type);
    expect(types).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "model.requested",
      "model.completed",
    ]);
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);

    // The process stops before completing the run; a resume re-executes the same loop.
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const again = { model: 0, pay: 0 };
    await refundLoop(resumed, again);
    expect(again).toEqual({ model: 0, pay: 0 });
    await resumed.completeRun("done");
    expect((await readWholeRun(store, address)).length).toBe(types.length + 1);
    const inspection = await inspectSession(store, address.sessionId);
    expect(inspection.unresolved).toEqual([]);
    await store.close();
  });

  it("parallel tool calls rejected together are each adopted by their own retry", async () => {
    const store = await open("parallel-retries.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const calls = ["a", "b"].map((id) => ({ toolCallId: id, name: "lookup", args: { id } }));
    store.loseReplies("tool.requested");
    const first = await Promise.allSettled(calls.map((call) => recorder.beforeToolCall(call)));
    expect(first.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    // Retried the other way round: each retry takes the request with its own toolCallId.
    const [b, a] = await Promise.all([...calls].reverse().map((c) => recorder.beforeToolCall(c)));
    expect([a?.seq, b?.seq]).toEqual([1, 2]);
    expect([a?.toolCallId, b?.toolCallId]).toEqual(["a", "b"]);
    await Promise.all([a, b].map((attempt) => attempt && recorder.toolCompleted(attempt, "ok")));
    const types = (await readWholeRun(store, address)).map((event) => event.type);
    expect(types).toEqual([
      "run.started",
      "tool.requested",
      "tool.requested",
      "tool.completed",
      "tool.completed",
    ]);
    await store.close();
  });

  it("a retry() that rejected after its request got in is adopted by the same retry()", async () => {
    const store = await open("retried-retry.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c", name: "lookup", args: {} });
    await recorder.toolFailed(call, new Error("timeout"));
    store.loseReplies("tool.requested");
    await expect(recorder.retry(call)).rejects.toMatchObject({ code: "store-unavailable" });
    const retry = await recorder.retry(call);
    expect(retry).toMatchObject({ seq: 3, retryOf: call.attemptId });
    await recorder.toolCompleted(retry, "ok");
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
    expect((await readWholeRun(store, address)).length).toBe(5);
    await store.close();
  });

  it("a request the caller never retries is left unresolved, and the run is not completed over it", async () => {
    const store = await open("given-up.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    store.loseReplies("tool.requested");
    const pay = { toolCallId: "pay-1", name: "pay", args: { cents: 500 } };
    await expect(recorder.beforeToolCall(pay)).rejects.toMatchObject({ code: "store-unavailable" });
    // The caller gave up on the payment and asked something else.
    const other = await recorder.beforeToolCall({ ...pay, args: { cents: 400 } });
    expect(other.seq).toBe(2);
    const unresolved = (await inspectSession(store, address.sessionId)).unresolved;
    expect(unresolved).toHaveLength(2);
    expect(unresolved.map((attempt) => attempt.attemptId)).toContain(other.attemptId);
    await recorder.toolCompleted(other, "paid 4.00");
    // Completed, the run would show the payment in flight for good: refused, naming it.
    const refused = await recorder.completeRun("done").catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: "unresolved-attempt",
      attempt: { toolCallId: "pay-1", seq: 1 },
    });
    expect((refused as Error).message).toContain(
      "tool call pay (pay-1) attempt " +
        `${(refused as { attemptId: string }).attemptId}: its before* rejected (the store was unavailable) though its request got in, and no call has asked it again`,
    );
    // The caller did not make it (as told): abandoned, the run completes with nothing open.
    await recorder.abandon((refused as { attempt: Attempt }).attempt, "never made");
    await recorder.completeRun("done");
    expect((await inspectSession(store, address.sessionId)).unresolved).toEqual([]);
    await store.close();
  });
});
