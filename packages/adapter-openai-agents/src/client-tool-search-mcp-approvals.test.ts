import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
  toAtif,
} from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { APPROVAL_EVENT_TYPE } from "./ledger-state.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { DELETE_BRANCH_ASKED } from "./testing/hosted-tool-agents.js";
import { approvingMcpRegistryAgent } from "./testing/loading-registry-agents.js";
import { agentSteps, firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// A hosted MCP server a client tool search loaded, whose tools need approval: the request to
// call it pauses the run as a hosted MCP tool given to the agent does (hosted-mcp-approvals
// .test.ts), the decision is recorded and sent, and the provider's call is its result. A new
// process resuming the paused run finds the server again by running the search again.

const DIED = "MCP registry, approved: dies in the model call after the decision";

// The crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-client-tool-search-mcp-approvals-", { beforeAll, afterAll });
ledgers.prepare(DIED);

// The decisions on approval requests the ledger holds.
const decisions = async (store: EventStore) =>
  (await readWholeSession(store, "s"))
    .filter((event) => event.type === APPROVAL_EVENT_TYPE)
    .map((event) => event.payload);

async function pausedRun() {
  const store = new MemoryEventStore();
  const first = approvingMcpRegistryAgent();
  const paused = await runWithLedger(first.agent, "delete old", runOptions(store, first.model));
  expect(paused.status).toBe("interrupted");
  return { store, first, paused };
}

// The step that asked for the call, with what ATIF says of it once decided.
async function askedStep(store: EventStore) {
  const steps = agentSteps((await toAtif(store, "s")).steps);
  return steps.find((step) => step.tool_calls?.some((call) => call.tool_call_id === "mcpr_1"));
}

describe("a hosted MCP server a client tool search loaded, with requireApproval", () => {
  test("paused: the request is recorded, awaiting the decision, the server's tools given to the model", async () => {
    const { store, first, paused } = await pausedRun();
    expect(paused.interruptions.map((item) => item.name)).toEqual(["delete_branch"]);
    expect(JSON.stringify(first.model.requests[1]?.tools)).toContain("repo");
    const trajectory = await toAtif(store, "s");
    expect((await askedStep(store))?.tool_calls).toEqual([
      {
        ...DELETE_BRANCH_ASKED,
        extra: {
          executed_by: "provider",
          item_type: "mcp_approval_request",
          server_label: "repo",
          status: "awaiting-decision",
        },
      },
    ]);
    expect(trajectory.extra).toMatchObject({
      status: "paused",
      awaiting_decision: {
        calls: [{ name: "delete_branch", tool_call_id: "mcpr_1", arguments: { branch: "old" } }],
      },
    });
  });

  test("approved: the decision is sent, and the provider's call is the request's result, shown once", async () => {
    const { store, first, paused } = await pausedRun();
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(first.agent, { ...runOptions(store, first.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "deleted old" });
    expect(await decisions(store)).toEqual([
      { callId: "mcpr_1", toolName: "delete_branch", approved: true },
    ]);
    const asked = await askedStep(store);
    expect(asked?.tool_calls?.[0]).toMatchObject({
      ...DELETE_BRANCH_ASKED,
      extra: { item_type: "mcp_call", status: "completed", approval: "approved", ran_as: "mcp_2" },
    });
    expect(asked?.observation?.results).toEqual([
      { source_call_id: "mcpr_1", content: "deleted old", extra: { executed_by: "provider" } },
    ]);
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => call.function_name)).toEqual(["tool_search", "delete_branch"]);
  });

  test("rejected: what the model was told is the request's result, and nothing ran", async () => {
    const { store, first, paused } = await pausedRun();
    const { state, item } = firstInterruption(paused);
    state.reject(item, { message: "not this branch" });
    const done = await resumeRun(first.agent, { ...runOptions(store, first.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "kept old" });
    expect(await decisions(store)).toMatchObject([
      { callId: "mcpr_1", toolName: "delete_branch", approved: false },
    ]);
    const asked = await askedStep(store);
    expect(asked?.tool_calls?.[0]?.extra).toMatchObject({
      item_type: "mcp_approval_request",
      status: "rejected",
      approval: "rejected",
    });
    expect(asked?.observation?.results?.[0]?.content).toBe("not this branch");
    // Nothing ran: the search is the one call made (an approved call has its span: see above).
    const spans = await exportedSpans(store, "s");
    expect(
      spans.map((span) => span.name).filter((name) => name.startsWith("execute_tool")),
    ).toEqual(["execute_tool tool_search"]);
  });

  test("a new process resumes the paused run from the ledger: the search runs again, the same request awaits, and the approval goes through", async () => {
    const { store } = await pausedRun();
    const second = approvingMcpRegistryAgent();
    second.model.calls = 2;
    const again = await resumeRun(second.agent, runOptions(store, second.model));
    expect(again.status).toBe("interrupted");
    expect(second.searches).toEqual(["branches"]);
    const { state, item } = firstInterruption(again);
    expect(item.name).toBe("delete_branch");
    state.approve(item);
    const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "deleted old" });
    // Only the model call after the decision was made in this process.
    expect(second.model.requests).toHaveLength(1);
    expect(await decisions(store)).toEqual([
      { callId: "mcpr_1", toolName: "delete_branch", approved: true },
    ]);
    const asked = await askedStep(store);
    expect(asked?.tool_calls?.[0]?.extra).toMatchObject({
      item_type: "mcp_call",
      approval: "approved",
      ran_as: "mcp_2",
    });
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
  });

  test("after the process was killed in the model call that sent the approval: the recorded decision is sent again, no person asked", async () => {
    const { store, first } = await ledgers.crashed(DIED);
    // It died in its third model call, the one that sent the decision.
    expect(first.modelInputs).toHaveLength(3);
    expect(JSON.stringify(first.modelInputs.at(-1))).toContain('"approve":true');
    const second = approvingMcpRegistryAgent();
    second.model.calls = 2;
    const done = await resumeRun(second.agent, runOptions(store, second.model));
    expect(done).toMatchObject({ status: "completed", finalOutput: "deleted old" });
    expect(second.model.requests).toHaveLength(1);
    expect(JSON.stringify(second.model.requests[0]?.input)).toContain(
      '"approve":true,"approval_request_id":"mcpr_1"',
    );
    expect(await decisions(store)).toEqual([
      { callId: "mcpr_1", toolName: "delete_branch", approved: true },
    ]);
    expect((await askedStep(store))?.tool_calls?.[0]?.extra).toMatchObject({
      item_type: "mcp_call",
      approval: "approved",
      ran_as: "mcp_2",
    });
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("completed");
  });
});
