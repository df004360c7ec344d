import { inspectSession, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { nextSteps, withNextSteps } from "./next-steps.js";
import { renderInspection } from "./render-inspection.js";
import { pausedInsideAgentCall, recordNestedInFlight } from "./session-fixture.test.data.js";

const PAUSED =
  'paused at an approval: charge2 [c_inner] {"amount":5} (agent Inner); decide it with the app\'s approval screen, not with agent-ledger resolve';

describe("a run paused at an approval", () => {
  it("is said to be paused, with the call it waits on; the agent call the pause keeps open is not offered for resolve", async () => {
    const store = new MemoryEventStore();
    const { outer } = await pausedInsideAgentCall(store);
    const inspection = await inspectSession(store, "paused");
    const text = renderInspection(inspection);
    const lines = text.split("\n");
    // The agent call the pause keeps open is not lost in a crash: not counted as unresolved, as
    // the viewer counts it.
    expect(lines[0]).toBe(
      "session paused  6 events  2 runs  0 unresolved  1 paused at an approval",
    );
    // In the tree it waits on the decision, as the viewer marks it; it is not listed as unresolved.
    expect(lines.find((line) => line.includes("tool inner [c_outer]"))).toContain(
      "⏸ WAITING ON A DECISION (requested ",
    );
    expect(text).not.toContain("UNRESOLVED");
    // Under the pause, with the calls it keeps open.
    expect(text).toContain(
      `   run main: ${PAUSED}\n     open while it waits (not lost in a crash): tool inner [c_outer]  run main seq 1  attempt ${outer.attemptId}\n`,
    );
    // In the tree, last under the paused run, and in its own list.
    expect(text).toContain(`   └─ ⏸ ${PAUSED}\n`);
    // The run's own line says it is paused, not running.
    expect(lines.find((line) => line.includes("Outer (main)"))).toContain("PAUSED");
    expect(text).not.toMatch(/\(main\)\s+RUNNING/);
    // So does the line of the run under it whose agent waits with it, as the viewer marks it.
    expect(text).not.toContain("RUNNING");
    expect(text.match(/ PAUSED /g)).toHaveLength(2);
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

  it("an agent call that is a decision itself is decided first, as the resume asks about it first; the call inside it waits on it", async () => {
    const store = new MemoryEventStore();
    // writer_tool's effect is unknown, not idempotent: the resume asks about it before its agent
    // can run again, and only then about the write inside it.
    const { outer } = await recordNestedInFlight(store, "outer-first");
    const inspection = await inspectSession(store, "outer-first");
    expect(nextSteps(inspection)).toEqual([
      {
        action: "resolve",
        command: `agent-ledger resolve --abandon "reason" -- outer-first ${outer.attemptId}`,
      },
      { action: "decide-outer-first", runId: "main", attemptId: outer.attemptId },
    ]);
    const text = renderInspection(inspection);
    expect(text).toContain(
      `next: decide first the agent's call this call was made inside (attempt ${outer.attemptId} on run main), which is a decision itself and the one the next resume asks about first: abandoned, it abandons this call too; approved, its agent runs again and this call is decided then`,
    );
    expect(text).not.toContain("decide the unresolved call inside its child run first");
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
