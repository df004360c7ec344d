import type { Attributes } from "@opentelemetry/api";
import type { JsonObject, JsonValue } from "../events/json.js";
import { toolContentParts } from "./content-media.js";
import { isObject, str, toolResultOf } from "./extract.js";
import type { Completion } from "./model-completions.js";
import { contentParts, withBytesOmitted } from "./otel-message-parts.js";
import { type HistoryMessage, requestConversation } from "./request-messages.js";
import type { AttemptRecord } from "./session-model.js";
import { modelOutputOf } from "./tool-model-output.js";

// The conversation of a model call as OpenTelemetry's opt-in GenAI attributes, each the JSON
// text of its schema (attributes cannot nest): `gen_ai.input.messages`,
// `gen_ai.output.messages`, `gen_ai.system_instructions` and `gen_ai.tool.definitions`. All are
// read from the recorded request and response, as redacted when they were recorded, by the
// readers ATIF and messageHistory use.

function toolCallParts(message: { toolCalls?: HistoryMessage["toolCalls"] }): JsonObject[] {
  return (message.toolCalls ?? []).map((call) => ({
    type: "tool_call",
    id: call.id ?? null,
    name: call.name,
    arguments: call.arguments,
  }));
}

/**
 * A tool's answer: what it returned, as recorded, unwrapped from what its framework wrapped it
 * in for the model (see `modelOutputOf`). One that holds images or files (see `toolContentParts`) is
 * given as message parts, so its bytes are named, never included; in any other, a part holding
 * bytes is named as in those (`withBytesOmitted`).
 */
function toolResponse(content: JsonValue, eventId: string): JsonValue {
  const recorded = toolResultOf(content) ?? null;
  const output = modelOutputOf(recorded);
  const result =
    output === undefined ? recorded : output.kind === "value" ? output.value : output.parts;
  const parts = toolContentParts(recorded);
  const shown = parts === undefined ? [] : contentParts(parts, eventId);
  return shown.some((part) => part.type !== "text") ? shown : withBytesOmitted(result, eventId);
}

function inputMessage(message: HistoryMessage, eventId: string): JsonObject {
  if (message.role === "tool")
    return {
      role: "tool",
      parts: [
        {
          type: "tool_call_response",
          id: message.toolCallId ?? null,
          response: toolResponse(message.content, eventId),
        },
      ],
    };
  const parts = [...contentParts(message.content, eventId), ...toolCallParts(message)];
  return { role: message.role, parts, ...(message.name !== undefined && { name: message.name }) };
}

/**
 * A tool the request offered the model: OpenAI's `{ type: "function", function }`, the AI
 * SDK's and OpenAI Agents' `{ type, name, description, inputSchema | parameters }`,
 * Anthropic's `input_schema`, OpenAI Agents' handoffs (`toolName`, `inputJsonSchema`: the
 * model is given each as a function), or only its name (what LangChain's test models record).
 */
function toolDefinition(tool: JsonValue): JsonObject | undefined {
  if (typeof tool === "string")
    return tool.length > 0 ? { type: "function", name: tool } : undefined;
  if (!isObject(tool)) return undefined;
  const fn = isObject(tool.function) ? tool.function : tool;
  const name = str(fn.name) ?? str(tool.toolName);
  if (name === undefined) return undefined;
  const description = fn.description ?? tool.toolDescription;
  const parameters = fn.parameters ?? tool.inputSchema ?? tool.input_schema ?? tool.inputJsonSchema;
  return {
    type: str(tool.type) ?? "function",
    name,
    ...(typeof description === "string" && { description }),
    ...(parameters !== undefined && parameters !== null && { parameters }),
  };
}

/** The tools a request offered: `tools` (AI SDK, OpenAI Agents), `handoffs`, `params.tools` (LangChain). */
function toolDefinitions(request: JsonValue): JsonObject[] {
  if (!isObject(request)) return [];
  const params = isObject(request.params) ? request.params : {};
  return [request.tools, request.handoffs, params.tools]
    .flatMap((list) => (Array.isArray(list) ? list : []))
    .map(toolDefinition)
    .filter((tool): tool is JsonObject => tool !== undefined);
}

/**
 * The answer of a completed call as one assistant message: its reasoning, text and the tool
 * calls it asked for, and why it stopped (the recorded reason, as in
 * `gen_ai.response.finish_reasons`; else `tool_call` when it asked for one, `stop` otherwise).
 */
function outputMessages(completion: Completion): JsonObject[] {
  const parts: JsonObject[] = [
    ...(completion.reasoning.length > 0
      ? [{ type: "reasoning", content: completion.reasoning }]
      : []),
    ...(completion.text.length > 0 ? [{ type: "text", content: completion.text }] : []),
    ...toolCallParts(completion),
  ];
  const finishReason =
    completion.finishReasons[0] ?? (completion.toolCalls.length > 0 ? "tool_call" : "stop");
  return [{ role: "assistant", parts, finish_reason: finishReason }];
}

/**
 * The opt-in message attributes of a model attempt's span: the request's messages, system
 * instructions given apart from them, the tools it offered, and the answer of a completed call
 * (`completion`, read by the caller from its response for the span's other attributes).
 */
export function messageAttributes(
  attempt: AttemptRecord,
  request: JsonValue,
  completion: Completion | undefined,
): Attributes {
  const requestedId = attempt.requested.eventId;
  const { system, messages } = requestConversation(request);
  const attributes: Attributes = {
    "gen_ai.input.messages": JSON.stringify(
      messages.map((message) => inputMessage(message, requestedId)),
    ),
  };
  if (system !== undefined)
    attributes["gen_ai.system_instructions"] = JSON.stringify([{ type: "text", content: system }]);
  const tools = toolDefinitions(request);
  if (tools.length > 0) attributes["gen_ai.tool.definitions"] = JSON.stringify(tools);
  if (completion !== undefined)
    attributes["gen_ai.output.messages"] = JSON.stringify(outputMessages(completion));
  return attributes;
}
