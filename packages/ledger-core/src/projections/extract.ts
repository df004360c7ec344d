import type { JsonObject, JsonValue } from "../events/json.js";
import { isObject, unwrapLangChain } from "./langchain-message.js";

// Tolerant readers for the payload shapes the adapters record. A model request or response
// is whatever the framework handed the adapter (AI SDK call options and LanguageModelV3
// results, LangChain messages and LLMResults, OpenAI Agents ModelRequest / ModelResponse,
// raw OpenAI chat completions, or a plain `{ text, toolCalls, usage }`). Projections never
// fail on an unknown shape: they fall back to less detail.
//
// This file holds the small readers the others share; what a request's messages are, what a
// response says, its token usage and its model's name are read in request-messages.ts,
// model-completions.ts, model-usage.ts and model-names.ts.

/** A tool call the model asked for, normalised. */
export interface ExtractedToolCall {
  id?: string;
  name: string;
  arguments: JsonValue;
}

export { isObject, toolResultOf } from "./langchain-message.js";

/** A non-empty string, or undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

/** A finite number, or the total of an AI SDK v3 usage count. */
export function num(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  // AI SDK v3 usage: { inputTokens: { total, noCache, cacheRead }, ... }
  if (isObject(value) && typeof value.total === "number") return value.total;
  return undefined;
}

/** The value of the first of `keys` that `object` holds, neither undefined nor null. */
export function pick(object: JsonObject, keys: string[]): JsonValue | undefined {
  for (const key of keys) if (object[key] !== undefined && object[key] !== null) return object[key];
  return undefined;
}

/** The assistant message inside a response, whatever wraps it. */
export function assistantMessage(response: JsonValue): JsonObject | undefined {
  const unwrapped = unwrapLangChain(response);
  if (!isObject(unwrapped)) return undefined;
  const choices = unwrapped.choices;
  if (Array.isArray(choices) && isObject(choices[0]) && isObject(choices[0].message))
    return { ...choices[0].message, finish_reason: choices[0].finish_reason ?? null };
  const generations = unwrapped.generations;
  if (Array.isArray(generations)) {
    const first = Array.isArray(generations[0]) ? generations[0][0] : generations[0];
    if (isObject(first)) {
      const message = first.message === undefined ? undefined : unwrapLangChain(first.message);
      if (isObject(message)) return { ...message, text: first.text ?? null };
      return first;
    }
  }
  for (const key of ["message", "response"]) {
    const inner = unwrapped[key];
    if (isObject(inner) && (inner.content !== undefined || inner.lc !== undefined))
      return unwrapLangChain(inner) as JsonObject;
  }
  return unwrapped;
}

/**
 * True for the request of an embedding call (`operation: "embeddings"`, as the AI SDK adapter
 * records it): not a turn of the conversation, and `embeddings` in OpenTelemetry.
 */
export function isEmbeddingsRequest(request: JsonValue | undefined): boolean {
  return isObject(request) && request.operation === "embeddings";
}

/** Plain text of a message content (a string, or text parts joined). */
export function textOf(content: JsonValue | undefined): string {
  if (content === undefined || content === null) return "";
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === "string") return part;
        if (isObject(part)) {
          if (typeof part.text === "string") return part.text;
          if (isObject(part.text) && typeof part.text.value === "string") return part.text.value;
          if (part.type === "refusal" && typeof part.refusal === "string") return part.refusal;
        }
        return "";
      })
      .filter((text) => text.length > 0)
      .join("\n");
  }
  if (isObject(content)) {
    if (typeof content.text === "string") return content.text;
    if (content.content !== undefined) return textOf(content.content);
  }
  return JSON.stringify(content);
}

/** A tool call's arguments: JSON text parsed (kept as text when it is none), else the value. */
export function parseArguments(value: JsonValue | undefined): JsonValue {
  if (typeof value === "string") {
    try {
      return JSON.parse(value) as JsonValue;
    } catch {
      return value;
    }
  }
  return value ?? {};
}

/**
 * A tool call as a model response records it (AI SDK `tool-call` parts, OpenAI's, LangChain's).
 * A Responses API `function_call` of a tool in a namespace (`{ name: "forecast", namespace:
 * "weather" }`, as OpenAI Agents records it) is named `weather.forecast`, as the SDK and the
 * adapter's `tool.requested` name it, so two namespaces' tools of one name are told apart; a
 * deferred top-level tool, called in a namespace of its own name, keeps its name.
 */
export function toolCallFrom(value: JsonValue): ExtractedToolCall | undefined {
  if (!isObject(value)) return undefined;
  const fn = isObject(value.function) ? value.function : undefined;
  const name = str(value.toolName) ?? str(value.name) ?? str(fn?.name);
  if (!name) return undefined;
  const namespace = value.type === "function_call" ? str(value.namespace) : undefined;
  const call: ExtractedToolCall = {
    name: namespace !== undefined && namespace !== name ? `${namespace}.${name}` : name,
    arguments: parseArguments(
      (pick(value, ["args", "arguments", "input"]) ?? fn?.arguments) as JsonValue | undefined,
    ),
  };
  const id = str(value.toolCallId) ?? str(value.callId) ?? str(value.call_id) ?? str(value.id);
  if (id) call.id = id;
  return call;
}
