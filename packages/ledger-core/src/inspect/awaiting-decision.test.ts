import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { inspectSession } from "./inspect-session.js";

const CHARGE_ACTOR = { type: "agent", id: "Outer" } as const;
const CHARGE = { name: "charge", toolCallId: "c1", args: { amount: 5 }, agent: "Inner" };

/** A run "main" with a child run "inner" (a sub-agent) that made one model call. */
async function parentAndChild() {
  const store = new MemoryEventStore();
  const main = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "main",
    actor: { type: "agent", id: "Outer" },
  });
  await main.startRun();
  const inner = main.child({ runId: "inner", actor: { type: "agent", id: "Inner" } });
  await inner.startRun();
  const model = await inner.beforeModelCall({ request: { model: "m", messages: [] } });
  await inner.modelCompleted(model, { text: "charge 5" });
  return { store, main, inner };
}

async function pauseOf(store: MemoryEventStore, runId = "main") {
  const inspection = await inspectSession(store, "s");
  const all = [...inspection.runs];
  for (const run of all) all.push(...run.children);
  return all.find((run) => run.runId === runId)?.awaitingDecision;
}

describe("a run paused awaiting a decision (checkpoint.saved with awaitingDecision)", () => {
  it("is reported with the calls its checkpoint names, until a call is made or decided anywhere in its tree", async () => {
    const { store, main, inner } = await parentAndChild();
    const checkpoint = await main.checkpoint({
      state: "opaque",
      awaitingDecision: { calls: [CHARGE], decideWith: "the app's approve button" },
    });
    expect(await pauseOf(store)).toEqual({
      checkpointSeq: checkpoint.seq,
      since: checkpoint.recordedAt,
      calls: [CHARGE],
      decideWith: "the app's approve button",
    });
    // Only the run whose checkpoint says so.
    expect(await pauseOf(store, "inner")).toBeUndefined();

    // The decided call is made in the child run: the run is no longer paused.
    await inner.beforeToolCall({ toolCallId: "c1", name: "charge", args: { amount: 5 } });
    expect(await pauseOf(store)).toBeUndefined();
  });

  it("keeps the attempt a crash left in flight that a call names (inFlightAttemptId), and drops one that is not an id", async () => {
    const { store, main, inner } = await parentAndChild();
    const call = await inner.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
    const crashed = { ...CHARGE, inFlightAttemptId: call.attemptId };
    await main.checkpoint({
      awaitingDecision: { calls: [crashed, { ...CHARGE, toolCallId: "c2", inFlightAttemptId: 7 }] },
    });
    expect((await pauseOf(store))?.calls).toEqual([crashed, { ...CHARGE, toolCallId: "c2" }]);
  });

  it("ends with a decision on an attempt, a later checkpoint that names no call, or the run's end", async () => {
    const decided = await parentAndChild();
    const call = await decided.inner.beforeToolCall({ toolCallId: "c0", name: "charge", args: {} });
    await decided.main.checkpoint({ awaitingDecision: { calls: [CHARGE] } });
    expect(await pauseOf(decided.store)).toMatchObject({ calls: [CHARGE] });
    const person = await SessionRecorder.resume({
      store: decided.store,
      sessionId: "s",
      runId: "inner",
      actor: { type: "human", id: "on-call" },
    });
    await person.approve(call, "checked");
    expect(await pauseOf(decided.store)).toBeUndefined();

    const replaced = await parentAndChild();
    await replaced.main.checkpoint({ awaitingDecision: { calls: [CHARGE] } });
    await replaced.main.checkpoint({ state: "final" });
    expect(await pauseOf(replaced.store)).toBeUndefined();

    const ended = await parentAndChild();
    await ended.main.checkpoint({ awaitingDecision: { calls: [CHARGE] } });
    await ended.main.cancelRun("nobody will decide");
    expect(await pauseOf(ended.store)).toBeUndefined();
  });

  it("ends with an event of a type the checkpoint names in endedBy (the adapter's own record of a decision), anywhere in its tree", async () => {
    const { store, main, inner } = await parentAndChild();
    await main.checkpoint({
      awaitingDecision: { calls: [CHARGE], endedBy: ["x.framework.decided"] },
    });
    // Another adapter event does not end it.
    await inner.record({ type: "x.framework.noted", payload: {} });
    expect(await pauseOf(store)).toMatchObject({ calls: [CHARGE] });
    await inner.record({ type: "x.framework.decided", payload: { callId: "c1" } });
    expect(await pauseOf(store)).toBeUndefined();
  });

  it("is reported in every resolve mode when the calls it names are over the blob threshold", async () => {
    const store = new MemoryEventStore();
    const main = new SessionRecorder({ store, sessionId: "s", runId: "main", actor: CHARGE_ACTOR });
    await main.startRun();
    // Each call's args under the threshold, the list of them over it (and one large string).
    const calls = ["c1", "c2", "c3"].map((toolCallId) => ({
      name: "send",
      toolCallId,
      args: {
        body: `${toolCallId}: ${"x".repeat(3000)}`,
        marked: { $ledger: "json", ref: `sha256:${"9".repeat(64)}` },
      },
    }));
    const state = "opaque ".repeat(2000);
    const checkpoint = await main.checkpoint({ state, awaitingDecision: { calls } });
    expect(checkpoint.evidenceRefs?.length).toBe(2);
    for (const resolve of [true, "in-flight", false] as const) {
      const inspection = await inspectSession(store, "s", { resolve });
      expect(inspection.runs[0]?.awaitingDecision, String(resolve)).toEqual({
        checkpointSeq: checkpoint.seq,
        since: checkpoint.recordedAt,
        calls,
      });
    }
  });

  it("is not reported for checkpoints that do not name calls, as other frameworks write them", async () => {
    const { store, main } = await parentAndChild();
    // Each one inspected while it is the run's latest checkpoint: a later one replaces it.
    for (const awaitingDecision of ["yes", [CHARGE], { calls: [{ args: {} }, "charge"] }]) {
      await main.checkpoint({ channel_values: { messages: [] }, awaitingDecision });
      const inspection = await inspectSession(store, "s");
      expect(JSON.stringify(inspection), JSON.stringify(awaitingDecision)).not.toContain(
        '"awaitingDecision"',
      );
    }
  });
});
