import { describe, expect, it } from "vitest";
import type { ToolEffect } from "../events/types.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { inspectSession } from "./inspect-session.js";
import {
  EFFECT_IN_CHILD_RUNS_FIELD,
  madeAgainByItself,
  RECORDS_EVERY_CALL_FIELD,
  REFUSAL_SAVED_TYPE,
} from "./made-again.js";

const AGENT_CALL = { [EFFECT_IN_CHILD_RUNS_FIELD]: true };
const NO_EFFECT: ToolEffect = { kind: "none", idempotent: true };

/** A run "main" of session "s". */
async function mainRun(store = new MemoryEventStore()) {
  const main = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "main",
    actor: { type: "agent", id: "Outer" },
  });
  await main.startRun();
  return { store, main };
}

/** Each unresolved attempt of session "s" by name, with whether the next resume makes it again. */
async function verdicts(store: MemoryEventStore): Promise<[string | undefined, boolean][]> {
  const inspection = await inspectSession(store, "s");
  const again = madeAgainByItself(inspection);
  return inspection.unresolved.map((attempt, index) => [attempt.name, again[index] === true]);
}

/** An agent call (its effect in its child runs) in flight on "main", with the child run it started. */
async function agentCall(options: { childPayload?: Record<string, unknown>; effect?: ToolEffect }) {
  const { store, main } = await mainRun();
  const call = await main.beforeToolCall({
    toolCallId: "c_agent",
    name: "writer_tool",
    args: { input: "write" },
    effect: options.effect ?? NO_EFFECT,
    metadata: AGENT_CALL,
  });
  const child = main.child({
    runId: "writer",
    actor: { type: "agent", id: "writer_tool" },
    causedByEventId: call.requestedEventId,
  });
  if (options.childPayload !== undefined) await child.startRun(options.childPayload);
  return { store, main, call, child };
}

describe("madeAgainByItself: calls in flight the next resume makes again without a person", () => {
  it("never a call whose refusal the agent saved as its result, approved or not", async () => {
    const { store, main } = await mainRun();
    const approved = await main.beforeToolCall({ toolCallId: "c1", name: "refund", args: {} });
    const undecided = await main.beforeToolCall({
      toolCallId: "c2",
      name: "lookup",
      args: {},
      effect: NO_EFFECT,
    });
    for (const attempt of [approved, undecided])
      await main.record({
        type: REFUSAL_SAVED_TYPE,
        attemptId: attempt.attemptId,
        stepId: attempt.stepId,
        payload: { toolCallId: attempt.toolCallId ?? null },
      });
    await main.approve(approved, "checked: not refunded");
    expect(await verdicts(store)).toEqual([
      ["refund", false],
      ["lookup", false],
    ]);
    const { unresolved } = await inspectSession(store, "s");
    expect(unresolved.map((attempt) => attempt.refusalSaved)).toEqual([true, true]);
  });

  it("by the declared effect for a call without child runs: model calls, idempotent or approved calls yes; others no", async () => {
    const { store, main } = await mainRun();
    await main.beforeModelCall({ request: { model: "m", input: "hi" } });
    await main.beforeToolCall({ toolCallId: "c1", name: "lookup", args: {}, effect: NO_EFFECT });
    await main.beforeToolCall({ toolCallId: "c2", name: "charge", args: {} });
    const approved = await main.beforeToolCall({ toolCallId: "c3", name: "refund", args: {} });
    await main.approve(approved, "checked: not refunded");
    expect(await verdicts(store)).toEqual([
      ["m", true],
      ["lookup", true],
      ["charge", false],
      ["refund", true],
    ]);
  });

  it("an agent call whose child run records every call: yes, even before that run made a call", async () => {
    const { store } = await agentCall({ childPayload: { [RECORDS_EVERY_CALL_FIELD]: true } });
    expect(await verdicts(store)).toEqual([["writer_tool", true]]);
  });

  it("an agent call whose child run does not say it records every call: no, whatever it recorded", async () => {
    const { store, child } = await agentCall({ childPayload: { agent: "writer" } });
    const model = await child.beforeModelCall({ request: { model: "m", input: "write" } });
    await child.modelCompleted(model, { output: [] });
    expect(await verdicts(store)).toEqual([["writer_tool", false]]);
  });

  it("an agent call with no child run: no, nothing shows how its agent was recorded", async () => {
    const { store } = await agentCall({});
    expect(await verdicts(store)).toEqual([["writer_tool", false]]);
  });

  it("only `true` says a run records every call", async () => {
    const { store } = await agentCall({ childPayload: { [RECORDS_EVERY_CALL_FIELD]: "yes" } });
    expect(await verdicts(store)).toEqual([["writer_tool", false]]);
  });

  it("an agent call declared not idempotent: no, even when its child run records every call", async () => {
    const { store } = await agentCall({
      childPayload: { [RECORDS_EVERY_CALL_FIELD]: true },
      effect: { kind: "none", idempotent: false },
    });
    expect(await verdicts(store)).toEqual([["writer_tool", false]]);
  });

  it("an agent call with two child runs: yes only when both record every call", async () => {
    const { store, main, call } = await agentCall({
      childPayload: { [RECORDS_EVERY_CALL_FIELD]: true },
    });
    const second = main.child({
      runId: "handoff",
      actor: { type: "agent", id: "editor" },
      causedByEventId: call.requestedEventId,
    });
    await second.startRun({});
    expect(await verdicts(store)).toEqual([["writer_tool", false]]);
  });

  it("a retry of an agent call in flight: judged by the child run its first attempt started", async () => {
    const { store, call } = await agentCall({
      childPayload: { [RECORDS_EVERY_CALL_FIELD]: true },
    });
    // The next process retried the call (its child run goes on, adopted) and died again.
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "main",
      actor: { type: "agent", id: "Outer" },
    });
    const retry = await resumed.retry(
      { ...call, kind: "tool", name: "writer_tool", effect: NO_EFFECT },
      { metadata: AGENT_CALL },
    );
    expect(retry.retryOf).toBe(call.attemptId);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved.map((attempt) => attempt.attemptId)).toEqual([retry.attemptId]);
    expect(madeAgainByItself(inspection)).toEqual([true]);
  });
});
