import { inspectSession, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { nextSteps } from "./next-steps.js";
import { renderInspection } from "./render-inspection.js";
import { recordNestedInFlight } from "./session-fixture.test.data.js";

describe("renderInspection", () => {
  it("points the resolve hint at the innermost call in flight, not the agent call waiting on it", async () => {
    const store = new MemoryEventStore();
    // The agent call is made again by itself: it waits on the call to decide inside it. (One
    // that is a decision itself is decided first: paused-runs.test.ts.)
    const { outer, inner } = await recordNestedInFlight(store, "nested", {
      outerEffect: { kind: "none", idempotent: true },
    });
    const text = renderInspection(await inspectSession(store, "nested"));
    expect(text).toContain("2 unresolved");
    expect(text).toContain(
      `check the effect, then: agent-ledger resolve --abandon "reason" -- nested ${inner.attemptId}`,
    );
    expect(text).not.toContain(`resolve nested ${outer.attemptId}`);
    expect(text).toContain(
      "next: decide the unresolved call inside its child run first; this call waits on it",
    );
  });

  it("prints a resolve command for every call a person must decide, as inspect --json does", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "two",
      runId: "parent",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const refund = await recorder.beforeToolCall({ toolCallId: "c1", name: "refund", args: {} });
    const child = recorder.child({ runId: "child", actor: { type: "agent", id: "b" } });
    await child.startRun();
    const reserve = await child.beforeToolCall({ toolCallId: "c2", name: "reserve", args: {} });
    const inspection = await inspectSession(store, "two");
    const text = renderInspection(inspection);
    for (const attempt of [refund, reserve])
      expect(text).toContain(
        `next: check the effect, then: agent-ledger resolve --abandon "reason" -- two ${attempt.attemptId}`,
      );
    const commands = nextSteps(inspection).flatMap((step) =>
      step.action === "resolve" ? [step.command] : [],
    );
    expect(commands).toHaveLength(2);
    for (const command of commands) expect(text).toContain(command);
  });

  it("asks for no decision on calls the next resume makes again by itself", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "retried",
      runId: "run",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeToolCall({
      toolCallId: "c-read",
      name: "lookup",
      args: {},
      effect: { kind: "read", idempotent: true },
    });
    await recorder.beforeModelCall({ request: { model: "m", input: "hi" } });
    const onlyRetried = renderInspection(await inspectSession(store, "retried"));
    expect(onlyRetried).toContain("2 unresolved");
    expect(onlyRetried).not.toContain("agent-ledger resolve");
    expect(onlyRetried).toContain(
      "next: nothing to decide; idempotent, so the next resume makes this call again by itself",
    );
    expect(onlyRetried).toContain(
      "next: nothing to decide; the next resume makes this model call again by itself",
    );

    // A call that needs a person is the one the hint names, wherever it is in the list.
    const pay = await recorder.beforeToolCall({ toolCallId: "c-pay", name: "pay", args: {} });
    const withPay = renderInspection(await inspectSession(store, "retried"));
    expect(withPay).toContain(
      `agent-ledger resolve --abandon "reason" -- retried ${pay.attemptId}`,
    );
    expect(withPay.match(/nothing to decide/g)).toHaveLength(2);
  });

  it("says under the resolve command what abandon and approve do to a handoff: its model never reads the reason", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "handoff",
      runId: "run",
      actor: { type: "agent", id: "triage", framework: "openai-agents" },
    });
    await recorder.startRun();
    // As @agent-ledger/openai-agents records a handoff whose callback was running at a crash.
    const handoff = await recorder.beforeToolCall({
      toolCallId: "call_handoff",
      name: "transfer_to_billing",
      args: {},
      metadata: { handoffTo: "billing" },
    });
    const text = renderInspection(await inspectSession(store, "handoff"));
    const lines = text.split("\n");
    const command = lines.findIndex((line) =>
      line.endsWith(`agent-ledger resolve --abandon "reason" -- handoff ${handoff.attemptId}`),
    );
    expect(command).toBeGreaterThan(0);
    const hint = lines[command + 1] ?? "";
    // A tool call's result is the reason, word for word; a handoff's is not.
    expect(hint).toContain(
      "this call hands off to billing, and the model never sees the reason: abandoned, the handoff goes ahead without its callback running again",
    );
    expect(hint).toContain('--approve "reason" instead runs it once more on the next resume');
    expect(hint).not.toContain("word for word");
  });

  it("prints a resolve command only for an attempt whose run can still append", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: "cancelled",
      runId: "run-1",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    // A person cancels the run while a tool call is in flight: the call stays unresolved.
    await recorder.beforeToolCall({ toolCallId: "c1", name: "transfer", args: { amount: 9 } });
    await recorder.cancelRun("stopped by operator");
    const text = renderInspection(await inspectSession(store, "cancelled"));
    expect(text).toContain("tool transfer [c1]  !! UNRESOLVED");
    expect(text).not.toContain("agent-ledger resolve");
    expect(text).toContain(
      "run run-1 is cancelled: it takes no more events and will not be resumed; check the effect by hand",
    );

    const open = new SessionRecorder({
      store,
      sessionId: "cancelled",
      runId: "run-2",
      actor: { type: "agent", id: "a" },
    });
    await open.startRun();
    const pending = await open.beforeToolCall({ toolCallId: "c2", name: "transfer", args: {} });
    const both = renderInspection(await inspectSession(store, "cancelled"));
    expect(both).toContain(
      `check the effect, then: agent-ledger resolve --abandon "reason" -- cancelled ${pending.attemptId}`,
    );
  });
});
