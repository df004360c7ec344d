import { readWholeSession } from "@agent-ledger/core";
import { Agent, hostedMcpTool, setTracingDisabled, tool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { approvalCallId } from "./approval-decisions.js";
import { APPROVAL_EVENT_TYPE, resumeRun, runWithLedger } from "./index.js";
import { FailingStore } from "./testing/failing-store.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

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

// An agent whose tool needs approval for every call: the model deletes /a and /b at once,
// then answers with what each call gave.
function deletingAgent() {
  const deleted: string[] = [];
  const remove = tool({
    name: "delete_file",
    description: "delete a file",
    parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async ({ path }) => {
      deleted.push(path);
      return `deleted ${path}`;
    },
  });
  const outputOf = (input: unknown, callId: string) =>
    (input as { callId?: string; output?: { text?: string } }[]).find(
      (item) => item.callId === callId && item.output !== undefined,
    )?.output?.text;
  const model = new ScriptedModel([
    () => [
      functionCall("delete_file", { path: "/a" }, "call_a"),
      functionCall("delete_file", { path: "/b" }, "call_b"),
    ],
    (request) => [
      message(`a: ${outputOf(request.input, "call_a")}; b: ${outputOf(request.input, "call_b")}`),
    ],
  ]);
  return { deleted, model, agent: new Agent({ name: "main", tools: [remove] }) };
}

describe("approval decisions", () => {
  test("a crash after a person approved one call and rejected another asks only about the call in flight", async () => {
    const store = new FailingStore();
    const first = deletingAgent();
    const paused = await runWithLedger(first.agent, "clean up", runOptions(store, first.model));
    expect(paused.interruptions.map((item) => approvalCallId(item))).toEqual(["call_a", "call_b"]);
    const state = paused.state;
    if (!state) throw new Error("expected a state");
    for (const item of paused.interruptions)
      if (approvalCallId(item) === "call_a") state.approve(item);
      else state.reject(item);
    // Dies while the approved delete of /a runs.
    store.goDownAfter((event) => event.type === "tool.requested");
    await resumeRun(first.agent, { ...runOptions(store, first.model), state }).catch(
      () => undefined,
    );
    store.failWhen = undefined;
    expect(first.deleted).toEqual(["/a"]);

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
