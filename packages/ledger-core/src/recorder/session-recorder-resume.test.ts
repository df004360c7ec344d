import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";
import { actor, recorder, request, resume } from "./session-recorder.test.data.js";

/** run-1 with a child run ("helper") that made one model call, answered "from child". */
async function recordRunWithChild(store: EventStore) {
  const parent = recorder(store);
  await parent.startRun();
  const child = parent.child({ actor: { type: "agent", id: "helper" } });
  await child.startRun();
  await child.modelCompleted(await child.beforeModelCall({ request }), { text: "from child" });
  return child;
}

describe("SessionRecorder", () => {
  it("resume answers recorded calls from the ledger and continues live at the frontier", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun({ task: "add" });
    await first.recordInput("add 1 and 2");
    const model = await first.beforeModelCall({ request });
    await first.modelCompleted(model, { toolCalls: [{ id: "call-1" }, { id: "call-2" }] });
    const done = await first.beforeToolCall({ toolCallId: "call-1", name: "add", args: { a: 1 } });
    await first.toolCompleted(done, 1);
    const inFlight = await first.beforeToolCall({
      toolCallId: "call-2",
      name: "add",
      args: { a: 2 },
      effect: { kind: "read", idempotent: true },
    });
    // The process dies here: call-2 went out and never came back.
    expect(
      (await inspectSession(store, "session-1")).unresolved.map((attempt) => attempt.toolCallId),
    ).toEqual(["call-2"]);

    const second = await resume(store);
    expect(second.resumed).toBe(true);
    await second.startRun({ task: "add" });
    await second.recordInput("add 1 and 2");
    const replayedModel = await second.beforeModelCall({ request });
    expect(replayedModel.replayed).toMatchObject({
      status: "completed",
      result: { toolCalls: [{ id: "call-1" }, { id: "call-2" }] },
    });
    const replayedTool = await second.beforeToolCall({
      toolCallId: "call-1",
      name: "add",
      args: { a: 1 },
    });
    expect(replayedTool.replayed).toMatchObject({ status: "completed", result: 1 });
    const retried = await second.beforeToolCall({
      toolCallId: "call-2",
      name: "add",
      args: { a: 2 },
      effect: { kind: "read", idempotent: true },
    });
    expect(retried.replayed).toBeUndefined();
    expect(retried.retryOf).toBe(inFlight.attemptId);
    await second.toolCompleted(retried, 2);
    const live = await second.beforeModelCall({ request: { ...request, step: 2 } });
    expect(live.replayed).toBeUndefined();
    await second.modelCompleted(live, { text: "3" });
    await second.completeRun({ answer: 3 });
    const inspection = await inspectSession(store, "session-1");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
    // The old process, if still alive, loses on conflict.
    await expect(first.toolCompleted(inFlight, 2)).rejects.toMatchObject({ code: "run-closed" });
  });

  it("resume refuses to re-run a non-idempotent tool that was in flight, until retried or abandoned", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun();
    const model = await first.beforeModelCall({ request });
    await first.modelCompleted(model, { toolCalls: [{ id: "pay-1" }] });
    await first.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
      effect: { kind: "write", idempotent: false },
    });

    const second = await resume(store);
    await second.beforeModelCall({ request });
    const error = await second
      .beforeToolCall({ toolCallId: "pay-1", name: "pay", args: { amount: 5 } })
      .catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "unresolved-attempt")).toBe(true);
    const unresolved = (error as { attempt: Parameters<SessionRecorder["abandon"]>[0] }).attempt;
    await second.abandon(unresolved, "the bank says no payment was made; the model will be told");

    const third = await resume(store);
    await third.beforeModelCall({ request });
    const replayed = await third.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
    });
    expect(replayed.replayed).toMatchObject({
      status: "abandoned",
      reason: "the bank says no payment was made; the model will be told",
    });
  });

  it("resume reports a different request as replay-divergence", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun();
    await first.modelCompleted(await first.beforeModelCall({ request }), { text: "hi" });
    const second = await resume(store);
    await expect(
      second.beforeModelCall({ request: { ...request, messages: [] } }),
    ).rejects.toMatchObject({ code: "replay-divergence" });
    await expect(
      SessionRecorder.resume({ store, sessionId: "session-1", runId: "nope", actor }),
    ).rejects.toMatchObject({ code: "not-found" });
  });

  it("a child of a resumed run adopts the recorded child run and replays it", async () => {
    const store = new MemoryEventStore();
    const child = await recordRunWithChild(store);

    const resumed = await resume(store);
    const again = resumed.child({ actor: { type: "agent", id: "helper" } });
    await again.startRun();
    expect(again.runId).toBe(child.runId);
    expect((await again.beforeModelCall({ request })).replayed).toMatchObject({
      result: { text: "from child" },
    });
    expect((await store.listRuns("session-1")).length).toBe(2);
  });

  it("a child started by a call adopts the child that call started, never another call's", async () => {
    // Two tool calls each ran the agent "helper" on a child run; the first completed, the
    // process died during the second.
    const store = new MemoryEventStore();
    const helper: Actor = { type: "agent", id: "helper" };
    const parent = recorder(store);
    await parent.startRun();
    const children: SessionRecorder[] = [];
    const calls = [];
    for (const toolCallId of ["c1", "c2"]) {
      const call = await parent.beforeToolCall({ toolCallId, name: "helper", args: {} });
      const child = parent.child({ actor: helper, causedByEventId: call.requestedEventId });
      await child.startRun();
      children.push(child);
      calls.push(call);
    }
    const [first, second] = children;
    await first?.completeRun("done");

    const resumed = await resume(store);
    // The second call, met again, goes on on its own child run, not on the first call's.
    const [call1, call2] = calls;
    expect(resumed.child({ actor: helper, causedByEventId: call2?.requestedEventId }).runId).toBe(
      second?.runId,
    );
    expect(resumed.child({ actor: helper, causedByEventId: call1?.requestedEventId }).runId).toBe(
      first?.runId,
    );
    // A call the ledger does not hold is new: a new run, never the completed child of another.
    const later = await resumed.beforeToolCall({ toolCallId: "c3", name: "helper", args: {} });
    const fresh = resumed.child({ actor: helper, causedByEventId: later.requestedEventId });
    await fresh.startRun();
    expect([first?.runId, second?.runId]).not.toContain(fresh.runId);
    expect(fresh.parentRunId).toBe("run-1");
    // Nor does a child without a cause take a child recorded for a call.
    expect([first?.runId, second?.runId]).not.toContain(resumed.child({ actor: helper }).runId);
  });

  it("a retry of the call that started a child adopts that child, in this process or the next", async () => {
    // The process died during a tool call whose agent ran on a child run.
    const store = new MemoryEventStore();
    const helper: Actor = { type: "agent", id: "helper" };
    const parent = recorder(store);
    await parent.startRun();
    const call = await parent.beforeToolCall({ toolCallId: "c1", name: "helper", args: {} });
    const child = parent.child({ actor: helper, causedByEventId: call.requestedEventId });
    await child.startRun();

    // A person approved running it again: the retry's request is the cause the adapter names.
    const resumed = await resume(store);
    const unresolved = await resumed
      .beforeToolCall({ toolCallId: "c1", name: "helper", args: {} })
      .catch((error: { attempt?: Attempt }) => error.attempt);
    if (!unresolved) throw new Error("expected the call to be unresolved");
    const retried = await resumed.retry(unresolved);
    expect(retried.requestedEventId).not.toBe(call.requestedEventId);
    expect(resumed.child({ actor: helper, causedByEventId: retried.requestedEventId }).runId).toBe(
      child.runId,
    );

    // The process died again: the next one adopts it through the recorded retry too.
    const third = await resume(store);
    expect(third.child({ actor: helper, causedByEventId: retried.requestedEventId }).runId).toBe(
      child.runId,
    );
  });

  it("a child whose recorded run could not be read tries again at its next call", async () => {
    const store = new MemoryEventStore();
    const child = await recordRunWithChild(store);

    const resumed = await resume(store);
    const again = resumed.child({ actor: { type: "agent", id: "helper" } });
    // The store is unreachable for the child's first read, then back.
    const readRun = store.readRun.bind(store);
    let down = true;
    store.readRun = (request) =>
      down
        ? Promise.reject(new LedgerError("store-unavailable", "connection reset"))
        : readRun(request);
    await expect(again.startRun()).rejects.toMatchObject({ code: "store-unavailable" });
    down = false;
    await again.startRun();
    expect(again.runId).toBe(child.runId);
    expect((await again.beforeModelCall({ request })).replayed).toMatchObject({
      result: { text: "from child" },
    });
  });
});

describe("approval from another process", () => {
  it("an approved unresolved tool call runs again on the next resume, once", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun();
    await first.modelCompleted(await first.beforeModelCall({ request }), {
      toolCalls: [{ id: "pay-1" }],
    });
    const inFlight = await first.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
    });

    // A person looks at the ledger from another process and approves a re-run.
    const operator = await resume(store, { type: "human", id: "ops" });
    await operator.approve(inFlight, "bank confirms no payment was made");
    const view = await inspectSession(store, "session-1");
    expect(view.unresolved.map((attempt) => attempt.approvedAt !== undefined)).toEqual([true]);
    // Who decided and why, for the person who reads the inspection before the next resume.
    expect(view.unresolved[0]).toMatchObject({
      approvedBy: "ops",
      approvalReason: "bank confirms no payment was made",
    });

    const resumed = await resume(store);
    await resumed.beforeModelCall({ request });
    const rerun = await resumed.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
    });
    expect(rerun.replayed).toBeUndefined();
    expect(rerun.retryOf).toBe(inFlight.attemptId);
    // If this re-run dies too, the next resume asks again: the approval covered one attempt.
    const again = await resume(store);
    await again.beforeModelCall({ request });
    await expect(
      again.beforeToolCall({ toolCallId: "pay-1", name: "pay", args: { amount: 5 } }),
    ).rejects.toMatchObject({ code: "unresolved-attempt" });
  });
});
