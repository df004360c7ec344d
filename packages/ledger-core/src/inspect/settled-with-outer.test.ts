import { describe, expect, it } from "vitest";
import type { Attempt } from "../recorder/attempt.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { inspectSession } from "./inspect-session.js";
import { madeAgainByItself } from "./made-again.js";
import { endedOuterCalls } from "./settled-with-outer.js";

const agent = { type: "agent" as const, id: "assistant" };

/**
 * Session "crashed": tool call research (call_0) on run "agent", with a model call and a tool
 * call charge (c0) in flight on its child run "inside".
 */
async function researchWithCallsInside() {
  const store = new MemoryEventStore();
  const root = new SessionRecorder({ store, sessionId: "crashed", runId: "agent", actor: agent });
  await root.startRun();
  const research = await root.beforeToolCall({ toolCallId: "call_0", name: "research", args: {} });
  const inside = root.child({
    runId: "inside",
    actor: agent,
    causedByEventId: research.requestedEventId,
  });
  await inside.startRun();
  await inside.beforeModelCall({ request: { model: "m", q: "plan" } });
  const charge = await inside.beforeToolCall({
    toolCallId: "c0",
    name: "charge",
    args: { cents: 700 },
    effect: { kind: "write", idempotent: false },
  });
  return { store, root, research, inside, charge };
}

/** Each unresolved call of "crashed": name, the ended call holding it, and the resume's verdict. */
async function verdicts(store: MemoryEventStore) {
  const inspection = await inspectSession(store, "crashed", { resolve: false });
  const outer = endedOuterCalls(inspection);
  const again = madeAgainByItself(inspection);
  return inspection.unresolved.map((attempt, index) => ({
    name: attempt.name,
    outer: outer[index] && `${outer[index].attempt.name} ${outer[index].ended}`,
    again: again[index],
  }));
}

describe("endedOuterCalls: calls in flight inside a tool call that ended", () => {
  it("an abandoned tool call whose insides were not settled holds them: not made again", async () => {
    const { store } = await researchWithCallsInside();
    const person = await SessionRecorder.resume({
      resolve: false,
      store,
      sessionId: "crashed",
      runId: "agent",
      actor: { type: "human", id: "ops" },
    });
    const [outer] = (await inspectSession(store, "crashed", { resolve: false })).unresolved;
    await person.abandon(outer as NonNullable<typeof outer>, "filed by hand");
    expect(await verdicts(store)).toEqual([
      { name: "m", outer: "research abandoned", again: false },
      { name: "charge", outer: "research abandoned", again: false },
    ]);
    const inspection = await inspectSession(store, "crashed", { resolve: false });
    expect(endedOuterCalls(inspection)[0]?.attempt.toolCallId).toBe("call_0");
  });

  it("a tool call that completed, or failed, with calls still in flight inside it holds them", async () => {
    for (const [end, word] of [
      [(root: SessionRecorder, call: Attempt) => root.toolCompleted(call, "ok"), "completed"],
      [(root: SessionRecorder, call: Attempt) => root.toolFailed(call, new Error("x")), "failed"],
    ] as const) {
      const { store, root, research } = await researchWithCallsInside();
      await end(root, research);
      expect(await verdicts(store)).toEqual([
        { name: "m", outer: `research ${word}`, again: false },
        { name: "charge", outer: `research ${word}`, again: false },
      ]);
    }
  });

  it("at any depth through open runs, the nearest ended call names it", async () => {
    const { store, root, research, inside, charge } = await researchWithCallsInside();
    // charge (c0), in flight, made a run of its own, and a tool call that ended made another.
    const deeper = inside.child({
      runId: "deeper",
      actor: agent,
      causedByEventId: charge.requestedEventId,
    });
    await deeper.startRun();
    await deeper.beforeModelCall({ request: { model: "deep", q: "1" } });
    const lookup = await inside.beforeToolCall({ toolCallId: "c1", name: "lookup", args: {} });
    const under = inside.child({
      runId: "under",
      actor: agent,
      causedByEventId: lookup.requestedEventId,
    });
    await under.startRun();
    await under.beforeModelCall({ request: { model: "under", q: "2" } });
    await inside.toolCompleted(lookup, "found");
    // Before research ends, only the call under lookup is held, by lookup.
    expect(await verdicts(store)).toEqual([
      { name: "research", outer: undefined, again: false },
      { name: "m", outer: undefined, again: true },
      { name: "charge", outer: undefined, again: false },
      { name: "deep", outer: undefined, again: true },
      { name: "under", outer: "lookup completed", again: false },
    ]);
    await root.toolCompleted(research, "ok");
    expect(await verdicts(store)).toEqual([
      { name: "m", outer: "research completed", again: false },
      { name: "charge", outer: "research completed", again: false },
      { name: "deep", outer: "research completed", again: false },
      { name: "under", outer: "lookup completed", again: false },
    ]);
  });

  it("a call on a closed run is not held: settling goes through open runs only", async () => {
    const { store, root, research, inside } = await researchWithCallsInside();
    await inside.cancelRun("stopped");
    await root.toolCompleted(research, "ok");
    expect(await verdicts(store)).toEqual([
      { name: "m", outer: undefined, again: true },
      { name: "charge", outer: undefined, again: false },
    ]);
  });
});
