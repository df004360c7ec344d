import { readWholeSession } from "@agent-ledger/core";
import { Agent, hostedMcpTool, setTracingDisabled } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { APPROVAL_EVENT_TYPE, resumeRun, runWithLedger } from "./index.js";
import { FailingStore } from "./testing/failing-store.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

// An agent with a hosted MCP server whose tool needs approval: the model asks to call it once.
function hostedMcpAgent() {
  const model = new ScriptedModel([
    () => [
      {
        type: "hosted_tool_call",
        name: "mcp_approval_request",
        id: "mcpr_1",
        status: "completed",
        providerData: {
          type: "mcp_approval_request",
          id: "mcpr_1",
          server_label: "repo",
          name: "delete_branch",
          arguments: "{}",
        },
      } as never,
    ],
    () => [message("deleted")],
  ]);
  const repo = hostedMcpTool({
    serverLabel: "repo",
    serverUrl: "https://mcp.invalid/repo",
    requireApproval: "always",
  });
  return { model, agent: new Agent({ name: "main", tools: [repo] }) };
}

describe("approval decisions", () => {
  test("a hosted MCP approval (its item has no callId) is recorded by its id and not asked again after a crash", async () => {
    const store = new FailingStore();
    const first = hostedMcpAgent();
    const paused = await runWithLedger(first.agent, "go", runOptions(store, first.model));
    const { state, item } = firstInterruption(paused);
    expect(item.name).toBe("delete_branch");
    state.approve(item);
    // Dies right after the decision is recorded, before the next model call.
    store.goDownAfter((event) => event.type === APPROVAL_EVENT_TYPE);
    await resumeRun(first.agent, { ...runOptions(store, first.model), state }).catch(
      () => undefined,
    );
    store.failWhen = undefined;
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
