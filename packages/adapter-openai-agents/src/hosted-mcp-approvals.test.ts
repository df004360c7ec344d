import { join } from "node:path";
import { inspectSession, toAtif } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, onTestFinished, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { branchDeletingAgent, DELETE_BRANCH_ASKED } from "./testing/hosted-tool-agents.js";
import { agentSteps, firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// A hosted MCP tool with requireApproval: the model asks to call it (an `mcp_approval_request`
// item), the run pauses until a person decides, and the provider runs the call, if approved,
// inside the next model call. The agent's process makes no call of its own: the projections show
// the call from the recorded requests and responses alone.
const scratch = scratchDirectory("oa-hosted-mcp-approvals-", { beforeAll, afterAll });
let files = 0;

async function openedStore(): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(scratch, `approvals-${++files}.db`) });
  await store.init();
  onTestFinished(() => store.close());
  return store;
}

async function pausedRun() {
  const store = await openedStore();
  const made = branchDeletingAgent();
  const paused = await runWithLedger(made.agent, "delete old", runOptions(store, made.model));
  expect(paused.status).toBe("interrupted");
  return { store, made, paused };
}

/**
 * A rejected request: the step that asked shows it rejected, what the model was told its result,
 * the next step does not show it again, and nothing ran (no span).
 */
async function expectRejected(store: SqliteEventStore, told: string): Promise<void> {
  const [asked, answered] = agentSteps((await toAtif(store, "s")).steps);
  expect(asked?.tool_calls).toEqual([
    {
      ...DELETE_BRANCH_ASKED,
      extra: {
        executed_by: "provider",
        item_type: "mcp_approval_request",
        status: "rejected",
        server_label: "repo",
        approval: "rejected",
      },
    },
  ]);
  expect(asked?.observation?.results).toEqual([
    { source_call_id: "mcpr_1", content: told, extra: { executed_by: "provider" } },
  ]);
  expect(answered?.tool_calls).toBeUndefined();
  const spans = await exportedSpans(store, "s", { includeToolContent: true });
  expect(spans.filter((span) => span.name.startsWith("execute_tool"))).toEqual([]);
}

describe("a hosted MCP call that needs approval", () => {
  test("paused: the step that asked shows the call, awaiting the decision, with no result", async () => {
    const { store } = await pausedRun();
    const trajectory = await toAtif(store, "s");
    const [asked] = agentSteps(trajectory.steps);
    expect(asked?.tool_calls).toEqual([
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
    expect(asked?.observation).toBeUndefined();
    expect(trajectory.extra).toMatchObject({
      status: "paused",
      awaiting_decision: {
        calls: [{ name: "delete_branch", tool_call_id: "mcpr_1", arguments: { branch: "old" } }],
      },
    });
    // Nothing ran: no execute_tool span, and no attempt of the process.
    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    expect(spans.filter((span) => span.name.startsWith("execute_tool"))).toEqual([]);
    const inspection = await inspectSession(store, "s");
    const attempts = inspection.runs[0]?.steps.flatMap((step) => step.attempts) ?? [];
    expect(attempts.map((attempt) => attempt.kind)).toEqual(["model"]);
  });

  test("approved: the call the provider ran next is the asked call's result, shown once", async () => {
    const { store, made, paused } = await pausedRun();
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(made.agent, { ...runOptions(store, made.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "deleted old" });

    const trajectory = await toAtif(store, "s");
    const [asked, answered] = agentSteps(trajectory.steps);
    expect(asked?.tool_calls).toEqual([
      {
        ...DELETE_BRANCH_ASKED,
        extra: {
          executed_by: "provider",
          item_type: "mcp_call",
          status: "completed",
          server_label: "repo",
          approval: "approved",
          ran_as: "mcp_2",
          ran_in_attempt: answered?.extra?.attempt_id,
        },
      },
    ]);
    expect(asked?.observation?.results).toEqual([
      { source_call_id: "mcpr_1", content: "deleted old", extra: { executed_by: "provider" } },
    ]);
    // The later step, in which the provider ran it, does not show the call a second time.
    expect(answered?.tool_calls).toBeUndefined();
    expect(answered?.message).toBe("deleted old");

    // OpenTelemetry: the call ran inside the second chat span, and names the request it answers.
    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    const tools = spans.filter((span) => span.name.startsWith("execute_tool"));
    expect(tools.map((span) => span.name)).toEqual(["execute_tool delete_branch"]);
    const ranIn = spans.find(
      (span) =>
        span.name.startsWith("chat") &&
        span.attributes["agent_ledger.attempt.id"] === answered?.extra?.attempt_id,
    );
    expect(tools[0]?.parentSpanContext?.spanId).toBe(ranIn?.spanContext().spanId);
    expect(tools[0]?.attributes).toMatchObject({
      "gen_ai.tool.call.id": "mcp_2",
      "agent_ledger.tool.approval_request_id": "mcpr_1",
      "agent_ledger.tool.server_label": "repo",
      "gen_ai.tool.call.result": JSON.stringify("deleted old"),
    });
  });

  test("rejected: the asked call says so, with what the model was told, and nothing ran", async () => {
    const { store, made, paused } = await pausedRun();
    const { state, item } = firstInterruption(paused);
    state.reject(item, { message: "not this branch" });
    const done = await resumeRun(made.agent, { ...runOptions(store, made.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "kept old" });

    await expectRejected(store, "not this branch");
  });

  test("decided by the agent's onApproval (no pause): approved, with the result, as a person's decision", async () => {
    const store = await openedStore();
    const made = branchDeletingAgent({ onApproval: async () => ({ approve: true }) });
    const done = await runWithLedger(made.agent, "delete old", runOptions(store, made.model));
    expect(done).toMatchObject({ status: "completed", finalOutput: "deleted old" });
    const [asked, answered] = agentSteps((await toAtif(store, "s")).steps);
    expect(asked?.tool_calls?.[0]?.extra).toMatchObject({
      item_type: "mcp_call",
      status: "completed",
      approval: "approved",
      ran_as: "mcp_2",
    });
    expect(asked?.observation?.results?.[0]?.content).toBe("deleted old");
    expect(answered?.tool_calls).toBeUndefined();
    // OpenTelemetry names it by what ran (ATIF's ran_as), beside the request ATIF names it by.
    expect(asked?.tool_calls?.[0]?.tool_call_id).toBe("mcpr_1");
    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    const tools = spans.filter((span) => span.name.startsWith("execute_tool"));
    expect(tools.map((span) => span.attributes)).toMatchObject([
      { "gen_ai.tool.call.id": "mcp_2", "agent_ledger.tool.approval_request_id": "mcpr_1" },
    ]);
  });

  test("rejected by the agent's onApproval with a reason (no pause): rejected, the reason its result", async () => {
    const store = await openedStore();
    const made = branchDeletingAgent({
      onApproval: async () => ({ approve: false, reason: "old is protected" }),
    });
    const done = await runWithLedger(made.agent, "delete old", runOptions(store, made.model));
    expect(done).toMatchObject({ status: "completed", finalOutput: "kept old" });
    await expectRejected(store, "old is protected");
  });
});
