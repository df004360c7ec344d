import { describe, expect, it } from "vitest";
import type { Actor, LedgerEvent } from "../events/types.js";
import type { Attempt } from "../recorder/attempt.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { asked } from "./asked-call.test.data.js";

const actor: Actor = { type: "agent", id: "planner" };
const person: Actor = { type: "human", id: "ops" };
const address = { sessionId: "session-1", runId: "run-1" };
const charge = (amount: number) => ({
  toolCallId: `call-${amount}`,
  name: "charge",
  args: { amount },
});

type Outcome = "completed" | "failed" | "abandoned" | "in flight" | "approved";

/**
 * A run whose model completion (the turn) asked for `charge(1)`; the call ended as `outcome`
 * before the process died. Returns the store and the turn's `model.completed`.
 */
async function crashedTurn(outcome: Outcome) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, ...address, actor });
  await recorder.startRun();
  const model = await recorder.beforeModelCall({ request: { ask: "pay" } });
  const turn = await recorder.modelCompleted(model, { toolCalls: [charge(1)] });
  const call = await recorder.beforeToolCall({ ...charge(1), causedByEventId: turn.eventId });
  if (outcome === "completed") await recorder.toolCompleted(call, "charged 1");
  if (outcome === "failed") await recorder.toolFailed(call, new Error("card declined"));
  const decider = await SessionRecorder.resume({ store, ...address, actor: person });
  if (outcome === "abandoned") await decider.abandon(call, "not charged");
  if (outcome === "approved") await decider.approve(call, "not charged: charge again");
  return { store, turn };
}

const events = (store: MemoryEventStore) => readWholeRun(store, address);

/** A refusal as unresolved, carrying the recorded attempt. */
const refusedAgain = { refused: "unresolved-attempt", attemptId: expect.any(String) };

const toolRequests = (all: readonly LedgerEvent[]) =>
  all.filter((event) => event.type === "tool.requested");

describe("a tool call asked for twice by the same turn on resume (a LangGraph Send task and the tools node)", () => {
  it("completed: the second is answered with the recorded result too, not recorded as a new call", async () => {
    const { store, turn } = await crashedTurn("completed");
    const before = (await events(store)).length;
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const cause = { causedByEventId: turn.eventId };
    const first = await asked(resumed.beforeToolCall({ ...charge(1), ...cause }));
    const second = await resumed.beforeToolCall({ ...charge(1), ...cause });
    expect(first).toMatchObject({ replayed: "completed" });
    expect(second.replayed).toMatchObject({ status: "completed", result: "charged 1" });
    expect(second.attemptId).toBe(first.attemptId);
    // Nothing written: no new step for it, and it can be answered as the first was.
    expect((await events(store)).length).toBe(before);
    await resumed.toolCompleted(second, "charged 1");
    expect(toolRequests(await events(store))).toHaveLength(1);
  });

  it("abandoned by a person: the second gets the abandonment too", async () => {
    const { store, turn } = await crashedTurn("abandoned");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const cause = { causedByEventId: turn.eventId };
    expect(await asked(resumed.beforeToolCall({ ...charge(1), ...cause }))).toMatchObject({
      replayed: "abandoned",
    });
    const second = await resumed.beforeToolCall({ ...charge(1), ...cause });
    expect(second.replayed).toMatchObject({ status: "abandoned", reason: "not charged" });
    expect(toolRequests(await events(store))).toHaveLength(1);
  });

  it("in flight at the crash: the second is refused as the first was", async () => {
    const { store, turn } = await crashedTurn("in flight");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const cause = { causedByEventId: turn.eventId };
    const first = await asked(resumed.beforeToolCall({ ...charge(1), ...cause }));
    const second = await asked(resumed.beforeToolCall({ ...charge(1), ...cause }));
    expect([first, second]).toEqual([refusedAgain, refusedAgain]);
    expect(toolRequests(await events(store))).toHaveLength(1);
  });

  it("in flight at the crash, the turn's cause left to the recorder: the second is refused too", async () => {
    const { store } = await crashedTurn("in flight");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const first = await asked(resumed.beforeToolCall(charge(1)));
    const second = await asked(resumed.beforeToolCall(charge(1)));
    expect([first, second]).toEqual([refusedAgain, refusedAgain]);
    expect(toolRequests(await events(store))).toHaveLength(1);
  });

  it("in flight at the crash, abandoned after the refusal: the second gets the abandonment", async () => {
    const { store, turn } = await crashedTurn("in flight");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const cause = { causedByEventId: turn.eventId };
    const refused: unknown = await resumed
      .beforeToolCall({ ...charge(1), ...cause })
      .catch((error) => error);
    await resumed.abandon((refused as { attempt: Attempt }).attempt, "not charged");
    const second = await resumed.beforeToolCall({ ...charge(1), ...cause });
    expect(second.replayed).toMatchObject({ status: "abandoned", reason: "not charged" });
    expect(toolRequests(await events(store))).toHaveLength(1);
  });

  it("in flight at the crash, completed by the caller after the refusal (it had happened): the second gets that result", async () => {
    const { store } = await crashedTurn("in flight");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const refused: unknown = await resumed.beforeToolCall(charge(1)).catch((error) => error);
    await resumed.toolCompleted(
      (refused as { attempt: Attempt }).attempt,
      "charged 1, says the bank",
    );
    const second = await resumed.beforeToolCall(charge(1));
    expect(second.replayed).toMatchObject({
      status: "completed",
      result: "charged 1, says the bank",
    });
    expect(toolRequests(await events(store))).toHaveLength(1);
  });

  it("approved by a person: it runs again once; the second is refused, not a second run", async () => {
    const { store, turn } = await crashedTurn("approved");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const cause = { causedByEventId: turn.eventId };
    const [recorded] = toolRequests(await events(store));
    const first = await asked(resumed.beforeToolCall({ ...charge(1), ...cause }));
    expect(first).toMatchObject({ runs: expect.any(String), retryOf: recorded?.attemptId });
    expect(await asked(resumed.beforeToolCall({ ...charge(1), ...cause }))).toEqual(refusedAgain);
    expect(toolRequests(await events(store))).toHaveLength(2);
  });

  it("declared idempotent: the second may run again too", async () => {
    const { store, turn } = await crashedTurn("in flight");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const call = { ...charge(1), causedByEventId: turn.eventId, effect: { idempotent: true } };
    const [recorded] = toolRequests(await events(store));
    const first = await asked(resumed.beforeToolCall(call));
    const second = await asked(resumed.beforeToolCall(call));
    expect([first, second]).toEqual([
      { runs: expect.any(String), retryOf: recorded?.attemptId },
      { runs: expect.any(String), retryOf: recorded?.attemptId },
    ]);
  });

  it("failed: the second is a new attempt that runs (a retry, as withRetry makes one)", async () => {
    const { store, turn } = await crashedTurn("failed");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const cause = { causedByEventId: turn.eventId };
    expect(await asked(resumed.beforeToolCall({ ...charge(1), ...cause }))).toMatchObject({
      replayed: "failed",
    });
    expect(await asked(resumed.beforeToolCall({ ...charge(1), ...cause }))).toMatchObject({
      runs: expect.any(String),
    });
  });

  it("asked for by another completion (a model that gives the same ids every turn), or without a cause: a new call", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const turn = async (ask: string) =>
      recorder.modelCompleted(await recorder.beforeModelCall({ request: { ask } }), {
        toolCalls: [charge(1)],
      });
    const first = await turn("pay");
    const call = await recorder.beforeToolCall({ ...charge(1), causedByEventId: first.eventId });
    await recorder.toolCompleted(call, "charged 1");
    const second = await turn("pay again");

    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    expect(
      await asked(resumed.beforeToolCall({ ...charge(1), causedByEventId: first.eventId })),
    ).toMatchObject({ replayed: "completed" });
    expect(
      await asked(resumed.beforeToolCall({ ...charge(1), causedByEventId: second.eventId })),
    ).toMatchObject({ runs: expect.any(String) });
    expect(await asked(resumed.beforeToolCall(charge(1)))).toMatchObject({
      runs: expect.any(String),
    });
  });

  it("an earlier turn re-executed, the cause left to the recorder: its replayed completion is the cause, so the repeat is answered too", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const turn = async (live: SessionRecorder, ask: string, amount: number) =>
      live.modelCompleted(await live.beforeModelCall({ request: { ask } }), {
        toolCalls: [charge(amount)],
      });
    await turn(recorder, "pay", 1);
    await recorder.toolCompleted(await recorder.beforeToolCall(charge(1)), "charged 1");
    await turn(recorder, "pay again", 2);
    await recorder.beforeToolCall(charge(2));

    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const before = (await events(store)).length;
    const replayedTurn = await resumed.beforeModelCall({ request: { ask: "pay" } });
    expect(resumed.lastModelCompletionId).toBe(replayedTurn.replayed?.eventId);
    const first = await asked(resumed.beforeToolCall(charge(1)));
    const second = await asked(resumed.beforeToolCall(charge(1)));
    expect([first, second]).toEqual([
      { replayed: "completed", attemptId: expect.any(String) },
      { replayed: "completed", attemptId: expect.any(String) },
    ]);
    expect((await events(store)).length).toBe(before);
    await resumed.beforeModelCall({ request: { ask: "pay again" } });
    expect(await asked(resumed.beforeToolCall(charge(2)))).toEqual(refusedAgain);
    expect(await asked(resumed.beforeToolCall(charge(2)))).toEqual(refusedAgain);
    expect(toolRequests(await events(store))).toHaveLength(2);
  });

  it("with other arguments than the call the first was matched with: replay-divergence", async () => {
    const { store, turn } = await crashedTurn("completed");
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const cause = { causedByEventId: turn.eventId };
    await resumed.beforeToolCall({ ...charge(1), ...cause });
    expect(
      await asked(resumed.beforeToolCall({ ...charge(1), args: { amount: 9 }, ...cause })),
    ).toEqual({ refused: "replay-divergence" });
  });
});
