import type { Attributes } from "@opentelemetry/api";
import type { JsonObject, JsonValue } from "../events/json.js";
import { toolContentParts } from "./content-media.js";
import { toolResultOf } from "./extract.js";
import { contentParts } from "./otel-message-parts.js";
import { type HistoryMessage, requestConversation } from "./request-messages.js";
import { type AttemptRecord, payloadOf } from "./session-model.js";

// The conversation of a model call as OpenTelemetry's opt-in GenAI attributes, each the JSON
// text of its schema (attributes cannot nest): `gen_ai.input.messages`. All are read from the recorded request and response, as redacted when they were recorded, by the
// readers ATIF and messageHistory use.

function toolCallParts(message: HistoryMessage): JsonObject[] {
  return (message.toolCalls ?? []).map((call) => ({
    type: "tool_call",
    id: call.id ?? null,
    name: call.name,
    arguments: call.arguments,
  }));
}

/**
 * A tool's answer: what it returned, as recorded. One that holds images or files (see
 * `toolContentParts`) is given as message parts, so its bytes are named, never included.
 */
function toolResponse(content: JsonValue, eventId: string): JsonValue {
  const result = toolResultOf(content) ?? null;
  const parts = toolContentParts(result);
  if (parts === undefined) return result;
  const shown = contentParts(parts, eventId);
  return shown.some((part) => part.type !== "text") ? shown : result;
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
 * The opt-in message attributes of a model attempt's span: the request's messages.
 */
export function messageAttributes(attempt: AttemptRecord): Attributes {
  const request = payloadOf(attempt.requested).request ?? null;
  const requestedId = attempt.requested.eventId;
  const { messages } = requestConversation(request);
  return {
    "gen_ai.input.messages": JSON.stringify(
      messages.map((message) => inputMessage(message, requestedId)),
    ),
  };
}
