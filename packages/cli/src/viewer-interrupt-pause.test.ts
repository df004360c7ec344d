import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { haveChromium, viewerInChromium } from "./chromium.test.data.js";

// As viewer.test.ts: the page runs in a real headless Chromium.

const QUESTION = "Refund 5 to bob?";

/**
 * What @agent-ledger/langchain records when a graph's tool pauses at LangGraph's `interrupt()`:
 * the tool's attempt ended as `tool.failed` with the GraphInterrupt it threw (its message the
 * interrupts as JSON, as LangGraph builds it; replay reads it so: the tool runs again when the
 * graph resumes), then the pause, a checkpoint naming the call and the question.
 */
async function pausedAtInterrupt(store: MemoryEventStore, sessionId: string): Promise<void> {
  const recorder = new SessionRecorder({
    store,
    sessionId,
    runId: "hitl",
    actor: { type: "agent", id: "langchain", framework: "langchain" },
  });
  await recorder.startRun({ framework: "langchain" });
  const model = await recorder.beforeModelCall({ request: { model: "m", input: "refund bob" } });
  await recorder.modelCompleted(model, {
    toolCalls: [{ id: "call-refund", name: "refund", args: { to: "bob", amount: 5 } }],
  });
  const refund = await recorder.beforeToolCall({
    toolCallId: "call-refund",
    name: "refund",
    args: { to: "bob", amount: 5 },
  });
  const interrupts = [{ id: "c7951405ef18ba5937b4f9e3ce7bedb3", value: QUESTION }];
  const thrown = Object.assign(new Error(JSON.stringify(interrupts, null, 2)), {
    name: "GraphInterrupt",
  });
  await recorder.toolFailed(refund, thrown);
  await recorder.checkpoint({
    kind: "langgraph.interrupt",
    awaitingDecision: {
      calls: [{ name: "refund", toolCallId: "call-refund", args: { to: "bob", amount: 5 } }],
      decideWith: `a person's answer to "${QUESTION}" (LangGraph interrupt()): resume the graph's thread with new Command({ resume: answer })`,
    },
  });
}

describe.skipIf(!haveChromium)("the viewer on a LangGraph run paused at interrupt()", () => {
  const store = new MemoryEventStore();
  const ui = viewerInChromium(store);

  it("shows the call that asked the person paused, with its question, not failed with the raw interrupts", async () => {
    await pausedAtInterrupt(store, "interrupted");
    const page = await ui.browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(ui.viewer.sessionUrl("interrupted"));
    await page.locator('[data-testid="attempt-row"]').first().waitFor();

    // The run waits for the person's answer.
    const run = page.locator('[data-testid="run-row"]');
    expect(await run.locator(".badge").first().textContent()).toBe("paused");
    // The tool that asked: paused at its question, in the words of `inspect` (render-inspection.ts).
    const refund = page.locator('[data-testid="attempt-row"]', { hasText: "tool refund" });
    const badge = refund.locator(".badge");
    expect(await badge.textContent()).toBe("paused");
    expect(await badge.getAttribute("class")).not.toContain("failed");
    expect(await refund.getAttribute("class")).toContain("status-paused");
    expect(await refund.getAttribute("class")).not.toContain("status-failed");
    const row = (await refund.textContent()) ?? "";
    expect(row).toContain(
      `paused at interrupt(${QUESTION})  (recorded as failed: GraphInterrupt; it runs again when the graph resumes)`,
    );
    expect(row).not.toContain("c7951405");
    expect(await refund.getAttribute("aria-label")).toContain("tool refund [call-refund], paused");
    const header = (await page.locator(".session-head").textContent()) ?? "";
    expect(header).toContain("1 run (0 completed, 0 running, 1 paused, 0 failed, 0 cancelled)");
    expect(errors).toEqual([]);
    await page.close();
  });

  it("another failure of a tool reads as before: failed, with its error", async () => {
    const recorder = new SessionRecorder({
      store,
      sessionId: "broken",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c2", name: "rpc", args: {} });
    await recorder.toolFailed(call, new Error("unavailable"));
    const page = await ui.browser.newPage();
    await page.goto(ui.viewer.sessionUrl("broken"));
    const row = page.locator('[data-testid="attempt-row"]', { hasText: "tool rpc" });
    await row.waitFor();
    expect(await row.locator(".badge").textContent()).toBe("failed");
    expect(await row.textContent()).toContain("unavailable");
    await page.close();
  });
});
