import { type EventStore, inspectSession, readWholeSession } from "@agent-ledger/core";
import { type Agent, type Model, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { approvalCallId } from "./approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun } from "./index.js";
import { deletingAgent, hostedMcpAgent } from "./testing/approval-agents.js";
import { chargingAgent, THREE_CHARGES, TWO_CHARGES } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-approvals-", { beforeAll, afterAll });
ledgers.prepare(
  "deleting, /a approved and /b rejected: dies inside the delete of /a",
  "deleting, /a approved and /b rejected: dies after the first decision is recorded",
  "hosted MCP, approved: dies after the decision is recorded",
  "three charges, the first approved for good: dies in the third model call",
  "two charges, the first approved for good: dies inside the second charge",
  "two charges, none asked about: dies in the third model call",
);

/** Resumes the run in a new process, approving every call it asks about, until it stops. */
async function resumeApprovingAll(store: EventStore, agent: Agent, model: Model) {
  const asked: string[] = [];
  let result = await resumeRun(agent, runOptions(store, model));
  while (result.status === "interrupted") {
    for (const item of result.interruptions) {
      asked.push(approvalCallId(item));
      result.state.approve(item);
    }
    result = await resumeRun(agent, { ...runOptions(store, model), state: result.state });
  }
  return { asked, result };
}

/** toolCallId of each tool.completed event of the session, in order. */
async function completedToolCalls(store: EventStore): Promise<unknown[]> {
  return (await readWholeSession(store, "s"))
    .filter((event) => event.type === "tool.completed")
    .map((event) => (event.payload as { toolCallId?: unknown }).toolCallId);
}

describe("approval decisions", () => {
  test("a crash after a person approved one call and rejected another asks only about the call in flight", async () => {
    // Asked about both deletes, a person approves /a and rejects /b; the process dies while the
    // approved delete of /a runs (after it deleted).
    const { store, first } = await ledgers.crashed(
      "deleting, /a approved and /b rejected: dies inside the delete of /a",
    );
    expect(first.interruptions.map((item) => item.callId)).toEqual(["call_a", "call_b"]);
    expect(first.effects).toEqual(["/a"]);

    // The delete of /a may or may not have happened: asked again. The rejected /b is not.
    const second = deletingAgent();
    second.model.calls = 1;
    const again = await resumeRun(second.agent, runOptions(store, second.model));
    expect(again.status).toBe("interrupted");
    expect(again.interruptions.map((item) => approvalCallId(item))).toEqual(["call_a"]);
    // A UI that approves whatever it is shown.
    for (const item of again.interruptions) again.state?.approve(item);
    const done = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      ...(again.state ? { state: again.state } : {}),
    });
    expect(done.status).toBe("completed");
    expect(second.deleted).toEqual(["/a"]);
    expect(String(done.finalOutput)).toMatch(/^a: deleted \/a; b: .*not approved/);
  });

  test("a person's decisions on two calls are one append: a crash right after it leaves both recorded, and inspect says nothing waits on a person", async () => {
    const { store, first } = await ledgers.crashed(
      "deleting, /a approved and /b rejected: dies after the first decision is recorded",
    );
    expect(first.interruptions.map((item) => item.callId)).toEqual(["call_a", "call_b"]);
    expect(first.effects).toEqual([]);
    const decisions = (await readWholeSession(store, "s")).filter(
      (event) => event.type === APPROVAL_EVENT_TYPE,
    );
    expect(decisions.map((event) => event.payload)).toEqual([
      { callId: "call_a", toolName: "delete_file", approved: true },
      { callId: "call_b", toolName: "delete_file", approved: false },
    ]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.runs[0]?.awaitingDecision).toBeUndefined();
    expect(inspection.unresolved).toEqual([]);

    // The next process goes on with both decisions, asking nobody.
    const second = deletingAgent();
    second.model.calls = 1;
    const done = await resumeRun(second.agent, runOptions(store, second.model));
    expect(done.status).toBe("completed");
    expect(second.deleted).toEqual(["/a"]);
    expect(String(done.finalOutput)).toMatch(/^a: deleted \/a; b: .*not approved/);
  });

  test("a hosted MCP approval (its item has no callId) is recorded by its id and not asked again after a crash", async () => {
    // A person approves the call; the process dies right after the decision is recorded, before
    // the next model call.
    const { store, first } = await ledgers.crashed(
      "hosted MCP, approved: dies after the decision is recorded",
    );
    expect(first.interruptions.map((item) => item.name)).toEqual(["delete_branch"]);
    const decisions = (await readWholeSession(store, "s")).filter(
      (event) => event.type === APPROVAL_EVENT_TYPE,
    );
    expect(decisions.map((event) => event.payload)).toEqual([
      { callId: "mcpr_1", toolName: "delete_branch", approved: true },
    ]);

    const second = hostedMcpAgent();
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result).toMatchObject({ status: "completed", finalOutput: "deleted" });
  });

  test("a crash after a person approved a tool for good (alwaysApprove) asks about nothing that ran and runs nothing twice", async () => {
    // A person approves charge c0 with alwaysApprove, so c1 runs without asking; the process
    // dies in the model call after both charges (the one that asks for c2).
    const { store, first } = await ledgers.crashed(
      "three charges, the first approved for good: dies in the third model call",
    );
    expect(first.interruptions.map((item) => item.callId)).toEqual(["c0"]);
    expect(first.effects).toEqual(["charge 5", "charge 7"]);
    expect(first.modelInputs).toHaveLength(3);

    const second = chargingAgent(THREE_CHARGES, undefined, { needsApproval: true });
    second.model.calls = 2;
    const { asked, result } = await resumeApprovingAll(store, second.agent, second.model);
    // Not c1, which ran; nor c2, a new call of the tool the person approved for good.
    expect(asked).toEqual([]);
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual(["charge 3"]);
    // The call in flight at the kill is made again, as a retry of that attempt, then the last.
    expect(second.model.requests).toHaveLength(2);
    expect(await completedToolCalls(store)).toEqual(["c0", "c1", "c2"]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    const models = inspection.runs[0]?.steps.filter((step) => step.kind === "model") ?? [];
    const retried = models[2]?.attempts ?? [];
    expect(retried.map((attempt) => attempt.status)).toEqual(["requested", "completed"]);
    expect(retried[1]?.retryOf).toBe(retried[0]?.attemptId);
  });

  test("a call in flight at a crash is asked about, even after a person approved its tool for good", async () => {
    // c0 approved with alwaysApprove; the process dies inside c1, after it charged.
    const { store, first } = await ledgers.crashed(
      "two charges, the first approved for good: dies inside the second charge",
    );
    expect(first.effects).toEqual(["charge 5", "charge 7"]);

    const second = chargingAgent(TWO_CHARGES, undefined, { needsApproval: true });
    second.model.calls = 2;
    const paused = await resumeRun(second.agent, runOptions(store, second.model));
    // c1 may have charged: the decision for good on c0 does not run it again unasked.
    expect(paused.interruptions.map((item) => approvalCallId(item))).toEqual(["c1"]);
    expect(second.effects).toEqual([]);
    const { asked, result } = await resumeApprovingAll(store, second.agent, second.model);
    expect(asked).toEqual(["c1"]);
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual(["charge 7"]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("calls that ran are not asked about after a crash, even when the tool now asks for approval", async () => {
    // Both charges ran without asking; the process dies in the model call after them. The new
    // process's charge asks a person for every call (its policy changed with a deploy).
    const { store, first } = await ledgers.crashed(
      "two charges, none asked about: dies in the third model call",
    );
    expect(first.effects).toEqual(["charge 5", "charge 7"]);

    const second = chargingAgent(TWO_CHARGES, undefined, { needsApproval: true });
    second.model.calls = 2;
    const { asked, result } = await resumeApprovingAll(store, second.agent, second.model);
    expect(asked).toEqual([]);
    expect(result).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(second.effects).toEqual([]);
    expect(await completedToolCalls(store)).toEqual(["c0", "c1"]);
    // No decision is recorded for them: no person made one.
    const decisions = (await readWholeSession(store, "s")).filter(
      (event) => event.type === APPROVAL_EVENT_TYPE,
    );
    expect(decisions).toEqual([]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });
});
