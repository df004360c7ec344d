import { Agent, hostedMcpTool, tool } from "@openai/agents";
import { z } from "zod";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/** An agent with a hosted MCP server whose tool needs approval: the model asks to call it once. */
export function hostedMcpAgent() {
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

/**
 * An agent whose tool needs approval for every call: the model deletes /a and /b at once, then
 * answers with what each call gave. The paths deleted are appended to `deleted`.
 */
export function deletingAgent(options: { afterEffect?: AfterEffect } = {}) {
  const deleted: string[] = [];
  const remove = tool({
    name: "delete_file",
    description: "delete a file",
    parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async ({ path }) => {
      deleted.push(path);
      await options.afterEffect?.(path);
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
