import { inspectSession, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { nextSteps, withNextSteps } from "./next-steps.js";
import { renderInspection } from "./render-inspection.js";
import { recordNestedInFlight } from "./session-fixture.test.data.js";

// What an adapter records when its run pauses at an approval inside an agent used as a tool: the
// agent call stays open, its child run made a model call, and the run's checkpoint names the call
// to decide (`awaitingDecision`), here with how the app decides it.
async function pausedInsideAgentCall(store: MemoryEventStore) {
  const main = new SessionRecorder({
    store,
    sessionId: "paused",
    runId: "main",
    actor: { type: "agent", id: "Outer" },
  });
  await main.startRun();
  const outer = await main.beforeToolCall({
    toolCallId: "c_outer",
    name: "inner",
    args: { input: "charge 5" },
    effect: { kind: "none", idempotent: true },
  });
  const inner = main.child({
    runId: "inner-run",
    actor: { type: "agent", id: "Inner" },
    causedByEventId: outer.requestedEventId,
  });
  await inner.startRun();
  const model = await inner.beforeModelCall({ request: { model: "m", input: "charge 5" } });
  await inner.modelCompleted(model, { toolCalls: [{ id: "c_inner", name: "charge2" }] });
  await main.checkpoint({
    state: "opaque to the ledger",
    awaitingDecision: {
      calls: [{ name: "charge2", toolCallId: "c_inner", args: { amount: 5 }, agent: "Inner" }],
      decideWith: "the app's approval screen",
    },
  });
  return { main, inner, outer };
}

const PAUSED =
  'paused at an approval: charge2 [c_inner] {"amount":5} (agent Inner); decide it with the app\'s approval screen, not with agent-ledger resolve';

describe("a run paused at an approval", () => {
  it("is said to be paused, with the call it waits on; the agent call the pause keeps open is not offered for resolve", async () => {
    const store = new MemoryEventStore();
    await pausedInsideAgentCall(store);
    const inspection = await inspectSession(store, "paused");
    const text = renderInspection(inspection);
    const lines = text.split("\n");
    expect(lines[0]).toBe(
      "session paused  6 events  2 runs  1 unresolved  1 paused at an approval",
    );
    // In the tree, last under the paused run, and in its own list.
    expect(text).toContain(`   └─ ⏸ ${PAUSED}\n`);
    // The run's own line says it is paused, not running.
    expect(lines.find((line) => line.includes("Outer (main)"))).toContain("PAUSED");
    expect(text).not.toMatch(/\(main\)\s+RUNNING/);
    expect(text).toContain(
      `⏸ 1 run paused at an approval, waiting for a person to decide in the app that runs the agent:\n   run main: ${PAUSED}\n`,
    );
    expect(text).not.toContain("agent-ledger resolve --");
    expect(text).toContain(
      "next: nothing to resolve: run main is paused at an approval (above) that this call waits on",
    );
    expect(withNextSteps(inspection)).toMatchObject({
      nextSteps: [{ action: "awaiting-decision", runId: "main" }],
      paused: [{ runId: "main", text: PAUSED }],
    });
  });

  it("is no longer paused once a call is made in its tree", async () => {
    const store = new MemoryEventStore();
    const { inner } = await pausedInsideAgentCall(store);
    const charge = await inner.beforeToolCall({
      toolCallId: "c_inner",
      name: "charge2",
      args: { amount: 5 },
    });
    const inspection = await inspectSession(store, "paused");
    expect(renderInspection(inspection)).not.toContain("paused at an approval");
    expect(withNextSteps(inspection)).not.toHaveProperty("paused");
    expect(nextSteps(inspection).map((step) => step.action)).toEqual([
      "decide-inner-first",
      "resolve",
    ]);
    expect(inspection.unresolved.map((attempt) => attempt.attemptId)).toContain(charge.attemptId);
  });
});

describe("the next step of an agent call open because of a call inside it", () => {
  it("decide the inner call first, even when the agent call would be made again by itself", async () => {
    const store = new MemoryEventStore();
    await recordNestedInFlight(store, "nested", {
      outerEffect: { kind: "none", idempotent: true },
    });
    const steps = nextSteps(await inspectSession(store, "nested"));
    expect(steps.map((step) => step.action)).toEqual(["decide-inner-first", "resolve"]);
  });

  it("once the inner call is approved for a re-run, the agent call is decided on its own: a resolve command, not 'decide the inner call first'", async () => {
    const store = new MemoryEventStore();
    const { outer, inner } = await recordNestedInFlight(store, "approved");
    const person = await SessionRecorder.resume({
      store,
      sessionId: "approved",
      runId: "writer",
      actor: { type: "human", id: "on-call" },
    });
    await person.approve(inner, "not written: checked the file");
    const inspection = await inspectSession(store, "approved");
    const steps = nextSteps(inspection);
    expect(steps).toEqual([
      {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" -- approved ${outer.attemptId}`,
      },
      { action: "none" },
    ]);
  });
});
