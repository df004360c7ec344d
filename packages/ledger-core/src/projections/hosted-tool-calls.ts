import type { JsonObject, JsonValue } from "../events/json.js";
import { isObject, parseArguments, str, toolCallFrom } from "./extract.js";

// Tool calls the provider ran inside a model call (OpenAI's hosted tools: web search, file
// search, code interpreter, image generation, a hosted MCP server's tools, a hosted shell; an
// AI SDK provider-executed tool). The agent's process requested nothing: they are no attempt
// of the ledger, and nothing of them is in flight at a crash. Their only record is the model
// call's response, as the adapters record it: OpenAI Agents' `{ output: [...items] }` (the
// SDK's protocol items), the AI SDK's `{ content: [...parts] }`.

/** A tool call the provider ran inside a completed model call, read from its response. */
export interface HostedToolCall {
  /** The provider's id of the call's item, when it has one. */
  id?: string;
  /** The tool's name as an agent defines it: `web_search`, `file_search`, an MCP server's tool. */
  name: string;
  arguments: JsonValue;
  /** `gen_ai.tool.type`: `datastore` for a file search, else `extension` (run by the provider). */
  toolType: "extension" | "datastore";
  /** The response item's type (`web_search_call`, `mcp_call`, `shell_call`...). */
  itemType: string;
  /** The provider's status of the call (`completed`, `failed`, `incomplete`...), when it says. */
  status?: string;
  /**
   * What the call gave the model, when the response holds it (a web search's results do not
   * come back). A generated image is in `image` instead.
   */
  output?: JsonValue;
  /** The image an image generation call made: its bytes (base64), as the response holds them. */
  image?: { base64: string; mediaType?: string };
  /** The provider's error message for a call that failed, when given. */
  error?: string;
  /** The label of the hosted MCP server the call went to. */
  serverLabel?: string;
  /**
   * A hosted MCP call a person (or the agent's `onApproval`) had to approve first: the id of
   * the approval request it answers, made by an earlier model call (see `hostedCallAnswersOf`).
   */
  approvalRequestId?: string;
  /**
   * A hosted MCP call that waits on that approval: an `mcp_approval_request` item. The provider
   * ran nothing yet: it runs the call, if approved, inside a later model call. What shows only
   * the calls that ran (an OpenTelemetry span) skips it.
   */
  awaitsApproval?: true;
}

/**
 * Items the SDK gives as `hosted_tool_call` that are no call the provider ran: the listing of
 * an MCP server's tools (before the model chose any), and the decision on an approval request
 * (sent by the agent's process in a request, never in a response). A request for a person's
 * approval is a call not made yet (see `awaitsApproval`).
 */
const NOT_CALLS: ReadonlySet<string> = new Set(["mcp_list_tools", "mcp_approval_response"]);
const APPROVAL_REQUEST = "mcp_approval_request";

/** Fields of an item's provider data that hold the call's result, not its arguments. */
const RESULT_FIELDS: ReadonlySet<string> = new Set([
  "id",
  "type",
  "status",
  "caller",
  "output",
  "outputs",
  "result",
  "results",
  "error",
  "approval_request_id",
]);

function errorText(value: JsonValue | undefined): string | undefined {
  if (isObject(value)) return str(value.message) ?? JSON.stringify(value);
  return str(value);
}

/**
 * An SDK item's `providerData`: the Responses API item's fields the SDK did not map to its own
 * (`{}` when it has none).
 */
export function providerDataOf(item: JsonObject): JsonObject {
  return isObject(item.providerData) ? item.providerData : {};
}

/** The type of a `hosted_tool_call` item as the Responses API names it (`web_search_call`...). */
export function hostedItemTypeOf(item: JsonObject): string {
  const data = providerDataOf(item);
  return str(data.type) ?? str(item.name) ?? "hosted_tool_call";
}

/** A `hosted_tool_call` item as a call, or undefined for one that is no call (see NOT_CALLS). */
function hostedCallOf(item: JsonObject): HostedToolCall | undefined {
  const data = providerDataOf(item);
  const itemType = hostedItemTypeOf(item);
  if (NOT_CALLS.has(itemType) || NOT_CALLS.has(str(item.name) ?? "")) return undefined;
  // An approval request names the MCP server's tool it asks to call, as `mcp_call` does.
  const isMcp = itemType === "mcp_call" || itemType === APPROVAL_REQUEST;
  // The SDK names the item after its Responses API type: `web_search_call` is a call of the
  // agent's `web_search` tool. A hosted MCP call is one of its server's tools, by name.
  const name =
    (isMcp ? str(data.name) : undefined) ?? (str(item.name) ?? itemType).replace(/_call$/, "");
  const rawArguments = str(item.arguments) ?? (isMcp ? str(data.arguments) : undefined);
  const call: HostedToolCall = {
    name,
    arguments:
      rawArguments !== undefined
        ? parseArguments(rawArguments)
        : Object.fromEntries(
            Object.entries(data).filter(
              ([key]) => !RESULT_FIELDS.has(key) && !(isMcp && key === "server_label"),
            ),
          ),
    toolType: itemType === "file_search_call" ? "datastore" : "extension",
    itemType,
  };
  const id = str(item.id) ?? str(data.id);
  if (id) call.id = id;
  // The SDK says "completed" of an approval request item: the call itself has not run.
  const status = itemType === APPROVAL_REQUEST ? undefined : (str(item.status) ?? str(data.status));
  if (status) call.status = status;
  if (itemType === "image_generation_call") {
    const base64 = str(item.output) ?? str(data.result);
    const format = str(data.output_format);
    if (base64) call.image = { base64, ...(format ? { mediaType: `image/${format}` } : {}) };
  } else {
    const output = [item.output, data.output, data.results, data.outputs].find(
      (value) => value !== undefined && value !== null,
    );
    if (output !== undefined) call.output = output;
  }
  const error = errorText(data.error ?? undefined);
  if (error) call.error = error;
  if (isMcp && str(data.server_label)) call.serverLabel = data.server_label as string;
  const approvalRequestId = str(data.approval_request_id);
  if (approvalRequestId) call.approvalRequestId = approvalRequestId;
  if (itemType === APPROVAL_REQUEST) call.awaitsApproval = true;
  return call;
}

/** A `shell_call` item the provider ran (its output is in the same response) as a call. */
function hostedShellCallOf(item: JsonObject, output: JsonObject): HostedToolCall {
  const call: HostedToolCall = {
    name: "shell",
    arguments: (item.action ?? {}) as JsonValue,
    toolType: "extension",
    itemType: "shell_call",
  };
  const id = callIdOf(item) ?? str(item.id);
  if (id) call.id = id;
  const status = str(output.status) ?? str(item.status);
  if (status) call.status = status;
  if (output.output !== undefined) call.output = output.output;
  return call;
}

/**
 * An AI SDK `tool-call` part the provider executed, with its `tool-result` part of the same
 * response when there is one (`isError`: the result is the error).
 */
function providerExecutedCallOf(part: JsonObject, result: JsonObject | undefined): HostedToolCall {
  const found = toolCallFrom(part);
  const call: HostedToolCall = {
    name: found?.name ?? "tool",
    arguments: found?.arguments ?? {},
    toolType: "extension",
    itemType: "tool-call",
  };
  if (found?.id) call.id = found.id;
  const output = result?.result ?? result?.output;
  if (result?.isError === true) {
    call.status = "failed";
    call.error = typeof output === "string" ? output : JSON.stringify(output ?? null);
  } else if (output !== undefined && output !== null) call.output = output;
  return call;
}

/** The AI SDK's provider-executed calls among a response's content parts. */
function providerExecutedCallsOf(content: JsonValue[]): HostedToolCall[] {
  const parts = content.filter(isObject);
  const results = new Map<string, JsonObject>();
  for (const part of parts)
    if (part.type === "tool-result" && str(part.toolCallId))
      results.set(part.toolCallId as string, part);
  return parts
    .filter((part) => part.type === "tool-call" && part.providerExecuted === true)
    .map((part) => providerExecutedCallOf(part, results.get(str(part.toolCallId) ?? "")));
}

/** The execution a `tool_search_call` / `tool_search_output` item names, if any. */
function toolSearchExecutionOf(item: JsonObject): string | undefined {
  const data = providerDataOf(item);
  return str(item.execution) ?? str(data.execution);
}

/**
 * The call id of a response item, which pairs a call with its output and names a program as a
 * caller: the SDK's `callId`, the Responses API's `call_id`, or either in the item's provider
 * data (where the SDK keeps what it does not map). The one reader of it here.
 */
export function callIdOf(item: JsonObject): string | undefined {
  const data = providerDataOf(item);
  return str(item.callId) ?? str(item.call_id) ?? str(data.call_id) ?? str(data.callId);
}

/**
 * A tool search the provider ran (`execution: "server"`) as a call: what it searched for, and
 * the deferred tools it loaded into the model's context (its output item, in the same response).
 */
function toolSearchCallOf(item: JsonObject, output: JsonObject | undefined): HostedToolCall {
  const call: HostedToolCall = {
    name: "tool_search",
    arguments: (item.arguments ?? {}) as JsonValue,
    toolType: "extension",
    itemType: "tool_search_call",
  };
  const id = str(item.id) ?? callIdOf(item);
  if (id) call.id = id;
  const status = str(output?.status) ?? str(item.status);
  if (status) call.status = status;
  if (output?.tools !== undefined) call.output = output.tools;
  return call;
}

/**
 * A program the provider ran (programmatic tool calling: a `program` item, its code) as a call.
 * Its status and output are its `program_output` item's, in the same response or, when the
 * program calls the agent's own tools and waits on their results, in a later one: read once per
 * run for every response by `hostedCallAnswersOf` (see `withProgramOutput`).
 */
function programCallOf(item: JsonObject): HostedToolCall {
  const call: HostedToolCall = {
    name: "programmatic_tool_calling",
    arguments: { code: (item.code ?? "") as JsonValue },
    toolType: "extension",
    itemType: "program",
  };
  const id = callIdOf(item) ?? str(item.id);
  if (id) call.id = id;
  const status = str(item.status);
  if (status) call.status = status;
  return call;
}

/** The output items of a response that answer a call of it, by the call's id. */
function outputsByCallId(items: JsonObject[], type: string): Map<string, JsonObject> {
  const outputs = new Map<string, JsonObject>();
  for (const item of items) {
    const callId = item.type === type ? callIdOf(item) : undefined;
    if (callId) outputs.set(callId, item);
  }
  return outputs;
}

/**
 * The tool calls the provider ran inside a model call, in the order of its response: its
 * `hosted_tool_call` items, its `shell_call` items answered in the same response (a hosted
 * shell's; a local shell's call is answered by the agent's process, in a later request), its
 * tool searches run by the provider (`tool_search_call`, `execution: "server"`; a search the
 * SDK runs in the process, `"client"`, is none), its `program` items (without their output:
 * see `programCallOf`); an AI SDK response's
 * `tool-call` parts marked `providerExecuted`. A hosted MCP call that waits on an approval is
 * among them too, marked `awaitsApproval`. None for a response of another shape. Read once per
 * run for every response by `hostedCallAnswersOf`.
 */
export function hostedToolCallsOf(response: JsonValue | undefined): HostedToolCall[] {
  if (!isObject(response)) return [];
  if (Array.isArray(response.content)) return providerExecutedCallsOf(response.content);
  if (!Array.isArray(response.output)) return [];
  const items = response.output.filter(isObject);
  const shellOutputs = outputsByCallId(items, "shell_call_output");
  // A server-run search's output follows its call; without a call id, the next one pairs.
  const searchOutputs = items.filter(
    (item) => item.type === "tool_search_output" && toolSearchExecutionOf(item) === "server",
  );
  const calls: HostedToolCall[] = [];
  for (const item of items) {
    if (item.type === "hosted_tool_call") {
      const call = hostedCallOf(item);
      if (call) calls.push(call);
    } else if (item.type === "shell_call") {
      const output = shellOutputs.get(callIdOf(item) ?? "");
      if (output) calls.push(hostedShellCallOf(item, output));
    } else if (item.type === "tool_search_call" && toolSearchExecutionOf(item) === "server") {
      const callId = callIdOf(item);
      const index = searchOutputs.findIndex((output) =>
        callId ? callIdOf(output) === callId : callIdOf(output) === undefined,
      );
      const [output] = index >= 0 ? searchOutputs.splice(index, 1) : [];
      calls.push(toolSearchCallOf(item, output));
    } else if (item.type === "program") {
      calls.push(programCallOf(item));
    }
  }
  return calls;
}

/**
 * The calls of a response that a program the provider runs made (programmatic tool calling:
 * items whose `caller` is `{ type: "program", callerId }`, the SDK's shape, or the Responses
 * API's `caller_id`): the program's call id, by each call's id.
 */
export function programCallersOf(response: JsonValue | undefined): Map<string, string> {
  const callers = new Map<string, string>();
  if (!isObject(response) || !Array.isArray(response.output)) return callers;
  for (const item of response.output.filter(isObject)) {
    const caller = isObject(item.caller) ? item.caller : undefined;
    const callerId =
      caller?.type === "program" ? (str(caller.callerId) ?? str(caller.caller_id)) : undefined;
    const id = callIdOf(item) ?? str(item.id);
    if (callerId && id) callers.set(id, callerId);
  }
  return callers;
}
