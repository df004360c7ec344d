import {
  Agent,
  codeInterpreterTool,
  fileSearchTool,
  hostedMcpTool,
  imageGenerationTool,
  type ModelRequest,
  type ModelResponse,
  programmaticToolCallingTool,
  shellTool,
  tool,
  toolSearchTool,
  webSearchTool,
} from "@openai/agents";
import { z } from "zod";
import { functionCall, message, ScriptedModel, type ScriptedTurn } from "./scripted-model.js";

type OutputItem = ModelResponse["output"][number];

/** A web search the provider ran, as the SDK's Responses model gives a `web_search_call` item. */
export function webSearchCall(id: string, query: string): OutputItem {
  return {
    type: "hosted_tool_call",
    id,
    name: "web_search_call",
    status: "completed",
    providerData: { id, type: "web_search_call", action: { type: "search", query } },
  } as OutputItem;
}

/**
 * An agent with OpenAI's web search: its model searches the web (inside its first call), asks
 * for the local `book` tool, then answers with what the tool gave.
 */
export function travelAgent() {
  const booked: string[] = [];
  const book = tool({
    name: "book",
    description: "book a trip",
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      booked.push(city);
      return `booked ${city}`;
    },
  });
  const model = new ScriptedModel([
    () => [
      webSearchCall("ws_1", "weather in Paris this weekend"),
      functionCall("book", { city: "Paris" }, "call_book"),
    ],
    () => [message("Paris is sunny: booked")],
  ]);
  const agent = new Agent({ name: "travel", tools: [webSearchTool(), book] });
  return { booked, model, agent };
}

/** A generated image's bytes (a 1x1 PNG), as an image generation call's result holds them. */
export const GENERATED_PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

/**
 * An agent with each other kind of hosted tool, whose model uses all of them in its one call,
 * as the SDK's Responses model gives them: a file search, code run by the code interpreter, an
 * image generated, a call of a hosted MCP server's tool that failed there (with the listing of
 * the server's tools, which is no call), a command in a hosted shell (its output in the same
 * response), then its answer.
 */
export function hostedToolsAgent() {
  const model = new ScriptedModel([
    () =>
      [
        {
          type: "hosted_tool_call",
          id: "fs_1",
          name: "file_search_call",
          status: "completed",
          providerData: {
            id: "fs_1",
            type: "file_search_call",
            queries: ["refund policy"],
            results: [{ file_id: "file_1", filename: "policy.md", score: 0.9, text: "30 days" }],
          },
        },
        {
          type: "hosted_tool_call",
          id: "ci_1",
          name: "code_interpreter_call",
          status: "completed",
          providerData: {
            id: "ci_1",
            type: "code_interpreter_call",
            code: "print(6 * 7)",
            container_id: "cntr_1",
            outputs: [{ type: "logs", logs: "42\n" }],
          },
        },
        {
          type: "hosted_tool_call",
          id: "ig_1",
          name: "image_generation_call",
          status: "completed",
          output: GENERATED_PNG,
          providerData: {
            id: "ig_1",
            type: "image_generation_call",
            revised_prompt: "a red dot",
            output_format: "png",
          },
        },
        {
          type: "hosted_tool_call",
          id: "mcpl_1",
          name: "mcp_list_tools",
          status: "completed",
          providerData: { id: "mcpl_1", type: "mcp_list_tools", server_label: "repo", tools: [] },
        },
        {
          type: "hosted_tool_call",
          id: "mcp_1",
          name: "mcp_call",
          status: "completed",
          providerData: {
            id: "mcp_1",
            type: "mcp_call",
            server_label: "repo",
            name: "list_branches",
            arguments: '{"repo":"ledger"}',
            error: "repository not found",
          },
        },
        {
          type: "shell_call",
          id: "sh_1",
          callId: "call_sh",
          status: "completed",
          action: { commands: ["ls"] },
        },
        {
          type: "shell_call_output",
          id: "sho_1",
          callId: "call_sh",
          status: "completed",
          output: [{ stdout: "a.txt\n", stderr: "", outcome: { type: "exit", exitCode: 0 } }],
        },
        message("done"),
      ] as OutputItem[],
  ]);
  const agent = new Agent({
    name: "main",
    tools: [
      fileSearchTool("vs_1"),
      codeInterpreterTool(),
      imageGenerationTool(),
      hostedMcpTool({ serverLabel: "repo", serverUrl: "https://mcp.invalid/repo" }),
      shellTool({ environment: { type: "container_auto" } }),
    ],
  });
  return { model, agent };
}

/** The `mcp_approval_response` the SDK sent in a request for the approval request `requestId`. */
function approvalSent(request: ModelRequest, requestId: string) {
  const items = Array.isArray(request.input) ? request.input : [];
  for (const item of items as { name?: string; providerData?: Record<string, unknown> }[])
    if (
      item.name === "mcp_approval_response" &&
      item.providerData?.approval_request_id === requestId
    )
      return item.providerData as { approve: boolean; reason?: string };
  return undefined;
}

/**
 * The turns of a model with a hosted MCP server (label `repo`) whose tools need approval, as
 * the SDK's Responses model gives its items: the model asks to delete branch `old` (an
 * `mcp_approval_request`, `mcpr_1`); once the agent's process sends the decision, the provider
 * runs the call if it was approved (an `mcp_call` answering the request, in the next response)
 * and the model answers, "deleted old" or "kept old".
 */
export function branchDeletionTurns(): ScriptedTurn[] {
  return [
    () => [
      {
        type: "hosted_tool_call",
        id: "mcpr_1",
        name: "mcp_approval_request",
        status: "completed",
        providerData: {
          id: "mcpr_1",
          type: "mcp_approval_request",
          server_label: "repo",
          name: "delete_branch",
          arguments: '{"branch":"old"}',
        },
      } as OutputItem,
    ],
    (request) => {
      const decision = approvalSent(request, "mcpr_1");
      if (!decision?.approve) return [message("kept old")];
      return [
        {
          type: "hosted_tool_call",
          id: "mcp_2",
          name: "mcp_call",
          status: "completed",
          output: "deleted old",
          providerData: {
            id: "mcp_2",
            type: "mcp_call",
            server_label: "repo",
            name: "delete_branch",
            arguments: '{"branch":"old"}',
            approval_request_id: "mcpr_1",
          },
        } as OutputItem,
        message("deleted old"),
      ];
    },
  ];
}

/** The call the branch-deleting agents' model asks for (`mcpr_1`), as an ATIF step shows it. */
export const DELETE_BRANCH_ASKED = {
  tool_call_id: "mcpr_1",
  function_name: "delete_branch",
  arguments: { branch: "old" },
};

/**
 * An agent with a hosted MCP server whose tools need approval (see `branchDeletionTurns`). With
 * `onApproval`, the agent decides itself and the run does not pause.
 */
export function branchDeletingAgent(
  options: { onApproval?: () => Promise<{ approve: boolean; reason?: string }> } = {},
) {
  const model = new ScriptedModel(branchDeletionTurns());
  const repo = hostedMcpTool({
    serverLabel: "repo",
    serverUrl: "https://mcp.invalid/repo",
    requireApproval: "always",
    ...(options.onApproval ? { onApproval: options.onApproval } : {}),
  });
  return { model, agent: new Agent({ name: "main", tools: [repo] }) };
}

/**
 * An agent whose tools load on demand: its model searches them with the provider's tool search
 * (`tool_search_call` / `tool_search_output`, `execution: "server"`, as the SDK's Responses model
 * gives them), calls the `forecast` tool the search loaded, then answers with what it gave.
 */
export function toolSearchAgent() {
  const forecast = tool({
    name: "forecast",
    description: "the weather forecast of a city",
    parameters: z.object({ city: z.string() }),
    deferLoading: true,
    execute: async ({ city }) => `sunny in ${city}`,
  });
  const model = new ScriptedModel([
    () =>
      [
        {
          type: "tool_search_call",
          id: "tsc_1",
          status: "completed",
          arguments: { paths: [], query: "weather forecast" },
          providerData: { execution: "server", call_id: null },
        },
        {
          type: "tool_search_output",
          id: "tso_1",
          status: "completed",
          tools: [{ type: "function", name: "forecast", defer_loading: true }],
          providerData: { execution: "server", call_id: null },
        },
        functionCall("forecast", { city: "Paris" }, "call_forecast"),
      ] as OutputItem[],
    () => [message("sunny in Paris")],
  ]);
  const agent = new Agent({ name: "main", tools: [toolSearchTool(), forecast] });
  return { model, agent };
}

/**
 * An agent with programmatic tool calling, as the SDK's Responses model gives its items: its
 * model writes a program the provider runs (`program`), which calls the agent's `price` tool (a
 * `function_call` whose caller is the program); once the process has answered, the program's
 * output (`program_output`) and the model's answer come in the next response.
 */
export function programAgent() {
  const priced: string[] = [];
  const price = tool({
    name: "price",
    description: "the price of an item",
    parameters: z.object({ item: z.string() }),
    allowedCallers: ["programmatic"],
    execute: async ({ item }) => {
      priced.push(item);
      return "21";
    },
  });
  const model = new ScriptedModel([
    () =>
      [
        {
          type: "program",
          id: "prg_1",
          callId: "call_program",
          code: "print(2 * price('tea'))",
          fingerprint: "fp_1",
          providerData: {},
        },
        {
          ...functionCall("price", { item: "tea" }, "call_price"),
          caller: { type: "program", callerId: "call_program" },
        },
      ] as OutputItem[],
    () =>
      [
        {
          type: "program_output",
          id: "prgo_1",
          callId: "call_program",
          output: "42",
          status: "completed",
          providerData: {},
        },
        message("two teas cost 42"),
      ] as OutputItem[],
  ]);
  const agent = new Agent({ name: "main", tools: [programmaticToolCallingTool(), price] });
  return { priced, model, agent };
}
