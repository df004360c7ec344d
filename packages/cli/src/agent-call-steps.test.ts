import {
  EFFECT_IN_CHILD_RUNS_FIELD,
  inspectSession,
  MemoryEventStore,
  RECORDS_EVERY_CALL_FIELD,
  SessionRecorder,
} from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { nextSteps } from "./next-steps.js";
import { renderInspection } from "./render-inspection.js";

/**
 * What an adapter records for an agent used as a tool that was in flight at a crash: the call
 * (no effect of its own, idempotent, its effect that of its child run) and, with `child`, the
 * child run it started, saying or not that it records every call, with a model call or none.
 */
async function agentCallInFlight(
  child?: { recordsEveryCall: boolean; modelCall: boolean },
  idempotent = true,
) {
  const store = new MemoryEventStore();
  const main = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "main",
    actor: { type: "agent", id: "main" },
  });
  await main.startRun();
  const call = await main.beforeToolCall({
    toolCallId: "c-w",
    name: "writer_tool",
    args: { input: "write" },
    effect: { kind: "none", idempotent },
    metadata: { [EFFECT_IN_CHILD_RUNS_FIELD]: true },
  });
  if (child) {
    const writer = main.child({
      runId: "writer",
      actor: { type: "agent", id: "writer_tool" },
      causedByEventId: call.requestedEventId,
    });
    await writer.startRun(child.recordsEveryCall ? { [RECORDS_EVERY_CALL_FIELD]: true } : {});
    if (child.modelCall) {
      const model = await writer.beforeModelCall({ request: { model: "m", input: "write" } });
      await writer.modelCompleted(model, { output: [] });
    }
  }
  return { store, call, inspection: await inspectSession(store, "s") };
}

describe("the next step of an agent call in flight (its effect that of its child run)", () => {
  it("its child run records every call, even none yet: nothing to decide, made again by itself", async () => {
    for (const modelCall of [false, true]) {
      const { inspection } = await agentCallInFlight({ recordsEveryCall: true, modelCall });
      expect(nextSteps(inspection)).toEqual([{ action: "none" }]);
      const text = renderInspection(inspection);
      expect(text).toContain(
        "next: nothing to decide; its child run records every call it makes, so the next resume makes this call again by itself",
      );
      expect(text).not.toContain("agent-ledger resolve --");
    }
  });

  it("its child run does not say it records every call: a call to decide, with the resolve command and why", async () => {
    const { inspection, call } = await agentCallInFlight({
      recordsEveryCall: false,
      modelCall: true,
    });
    expect(nextSteps(inspection)).toEqual([
      {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" -- s ${call.attemptId}`,
      },
    ]);
    const text = renderInspection(inspection);
    expect(text).toContain(
      "next: what its agent did may not all be in the ledger (no child run of it says it records every call), so the next resume asks about it: check the effect, then: agent-ledger resolve",
    );
    expect(text).not.toContain("idempotent, so the next resume makes this call again");
  });

  it("no child run at all: a call to decide, nothing shows what its agent did", async () => {
    const { inspection, call } = await agentCallInFlight();
    expect(nextSteps(inspection)).toEqual([
      {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" -- s ${call.attemptId}`,
      },
    ]);
    expect(renderInspection(inspection)).toContain(
      "next: what its agent did may not all be in the ledger (no child run of it says it records every call), so the next resume asks about it",
    );
  });

  it("declared not idempotent: a call to decide like any other, not for want of a child run that records every call", async () => {
    // Its child run said it records every call, and inspect said no child run of it did: the
    // call is a decision because it is not idempotent (seen on an on-call walk over PostgreSQL).
    const { inspection, call } = await agentCallInFlight(
      { recordsEveryCall: true, modelCall: true },
      false,
    );
    expect(nextSteps(inspection)).toEqual([
      {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" -- s ${call.attemptId}`,
      },
    ]);
    const text = renderInspection(inspection);
    expect(text).toContain(
      `next: check the effect, then: agent-ledger resolve --abandon "reason" -- s ${call.attemptId}`,
    );
    expect(text).not.toContain("no child run of it says it records every call");
  });

  it("retried after a crash and in flight again with a call inside its child run: decide that call first, not 'nothing to decide'", async () => {
    // The next process made the agent call again (attempt 2, by itself: its child run records
    // every call); its agent went on on the child run the first attempt started, as adapters do,
    // and the process died inside the write there. Linked through the first attempt only, the
    // retry looked like a call with nothing open inside it: "none", and the write's decision
    // was never said to hold it up.
    const { store, call } = await agentCallInFlight({ recordsEveryCall: true, modelCall: true });
    const main = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "main",
      actor: { type: "agent", id: "main" },
    });
    const retry = await main.retry(
      {
        ...call,
        kind: "tool",
        name: "writer_tool",
        effect: { kind: "none", idempotent: true },
      },
      { metadata: { [EFFECT_IN_CHILD_RUNS_FIELD]: true } },
    );
    const writer = await SessionRecorder.resume({
      store,
      sessionId: "s",
      runId: "writer",
      actor: { type: "agent", id: "writer_tool" },
    });
    const write = await writer.beforeToolCall({
      toolCallId: "c-write",
      name: "write",
      args: {},
      effect: { kind: "write", idempotent: false },
    });
    const inspection = await inspectSession(store, "s");
    const steps = nextSteps(inspection);
    const byAttempt = Object.fromEntries(
      inspection.unresolved.map((attempt, index) => [attempt.attemptId, steps[index]]),
    );
    expect(byAttempt).toEqual({
      [retry.attemptId]: { action: "decide-inner-first" },
      [write.attemptId]: {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" -- s ${write.attemptId}`,
      },
    });
    expect(renderInspection(inspection)).toContain(
      "next: decide the unresolved call inside its child run first; this call waits on it",
    );
  });
});
