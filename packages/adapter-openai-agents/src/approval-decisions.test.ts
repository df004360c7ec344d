import { readWholeSession } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, describe, expect, test } from "vitest";
import { approvalCallId } from "./approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun } from "./index.js";
import { deletingAgent, hostedMcpAgent } from "./testing/approval-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-approvals-", afterAll);
ledgers.prepare(
  "deleting, /a approved and /b rejected: dies inside the delete of /a",
  "hosted MCP, approved: dies after the decision is recorded",
);

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
});
