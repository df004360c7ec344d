import type { JsonObject, JsonValue } from "../events/json.js";
import { isObject, unwrapLangChain } from "./langchain-message.js";

// Tolerant readers for the payload shapes the adapters record. A model request or response
// is whatever the framework handed the adapter (AI SDK call options and LanguageModelV3
// results, LangChain messages and LLMResults, OpenAI Agents ModelRequest / ModelResponse,
// raw OpenAI chat completions, or a plain `{ text, toolCalls, usage }`). Projections never
// fail on an unknown shape: they fall back to less detail.

/** Token counts of one model call, when the response says. */
export interface TokenUsage {
  /** All input tokens, cached ones included (as the GenAI conventions ask). */
  inputTokens?: number;
  outputTokens?: number;
  /** Input tokens read from the provider's prompt cache. */
  cachedTokens?: number;
  /** Input tokens written to the provider's prompt cache. */
  cacheCreationTokens?: number;
}

/** A tool call the model asked for, normalised. */
export interface ExtractedToolCall {
  id?: string;
  name: string;
  arguments: JsonValue;
}

/** One chat message, normalised (roles as in OpenAI-style chat). */
export interface HistoryMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: JsonValue;
  toolCalls?: ExtractedToolCall[];
  toolCallId?: string;
  name?: string;
}

export { isObject, toolResultOf } from "./langchain-message.js";

/** A non-empty string, or undefined. */
export function str(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}

function num(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  // AI SDK v3 usage: { inputTokens: { total, noCache, cacheRead }, ... }
  if (isObject(value) && typeof value.total === "number") return value.total;
  return undefined;
}

function pick(object: JsonObject, keys: string[]): JsonValue | undefined {
  for (const key of keys) if (object[key] !== undefined && object[key] !== null) return object[key];
  return undefined;
}

/** The assistant message inside a response, whatever wraps it. */
function assistantMessage(response: JsonValue): JsonObject | undefined {
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

/** The model name a request (or response) names. */
export function modelNameOf(...values: (JsonValue | undefined)[]): string | undefined {
  for (const value of values) {
    if (!isObject(value)) continue;
    const direct = str(value.model) ?? str(value.modelId) ?? str(value.model_name);
    if (direct) return direct;
    if (isObject(value.model)) {
      const nested = str(value.model.modelId) ?? str(value.model.model) ?? str(value.model.name);
      if (nested) return nested;
    }
    for (const key of ["modelSettings", "settings", "options", "invocation_params", "response"]) {
      const inner = value[key];
      if (isObject(inner)) {
        const found = str(inner.model) ?? str(inner.modelId) ?? str(inner.model_name);
        if (found) return found;
      }
    }
    const message = assistantMessage(value);
    if (message && isObject(message.response_metadata)) {
      const found =
        str(message.response_metadata.model_name) ?? str(message.response_metadata.model);
      if (found) return found;
    }
  }
  return undefined;
}

/** The provider's id of a response (OpenAI Agents `responseId`, AI SDK `response.id`, a message id). */
export function responseIdOf(response: JsonValue | undefined): string | undefined {
  if (!isObject(response)) return undefined;
  const inner = isObject(response.response) ? response.response : {};
  return (
    str(response.id) ??
    str(response.responseId) ??
    str(inner.id) ??
    str(assistantMessage(response)?.id)
  );
}

/**
 * True for the request of an embedding call (`operation: "embeddings"`, as the AI SDK adapter
 * records it): not a turn of the conversation, and `embeddings` in OpenTelemetry.
 */
export function isEmbeddingsRequest(request: JsonValue | undefined): boolean {
  return isObject(request) && request.operation === "embeddings";
}

/** Token usage of a response, from the common shapes. */
export function usageOf(response: JsonValue | undefined): TokenUsage {
  if (response === undefined) return {};
  const message = assistantMessage(response);
  const root = isObject(response) ? (unwrapLangChain(response) as JsonObject) : {};
  const candidates: JsonValue[] = [];
  for (const holder of [root, message]) {
    if (!holder) continue;
    for (const key of ["usage", "usage_metadata", "usageMetadata", "tokenUsage"]) {
      if (holder[key] !== undefined) candidates.push(holder[key] as JsonValue);
    }
  }
  if (isObject(root.llmOutput)) {
    const output = root.llmOutput;
    if (output.tokenUsage !== undefined) candidates.push(output.tokenUsage);
    if (output.usage !== undefined) candidates.push(output.usage);
  }
  for (const candidate of candidates) {
    if (!isObject(candidate)) continue;
    const usage: TokenUsage = {};
    const input = num(
      pick(candidate, ["inputTokens", "input_tokens", "promptTokens", "prompt_tokens"]),
    );
    const output = num(
      pick(candidate, ["outputTokens", "output_tokens", "completionTokens", "completion_tokens"]),
    );
    if (output !== undefined) usage.outputTokens = output;
    // Anthropic's `input_tokens` counts only the uncached part: the cache reads and writes are
    // beside it. OpenAI (`prompt_tokens_details`), the AI SDK (`inputTokens.total`) and
    // LangChain (`usage_metadata`) already count them in the total.
    const anthropicRead = num(candidate.cache_read_input_tokens);
    const anthropicCreation = num(candidate.cache_creation_input_tokens);
    if (input !== undefined)
      usage.inputTokens = input + (anthropicRead ?? 0) + (anthropicCreation ?? 0);
    const cached =
      anthropicRead ??
      num(pick(candidate, ["cachedTokens", "cached_tokens", "cacheReadTokens"])) ??
      (isObject(candidate.inputTokens) ? num(candidate.inputTokens.cacheRead) : undefined) ??
      detailCached(candidate, ["cached_tokens", "cachedTokens", "cache_read"]);
    if (cached !== undefined) usage.cachedTokens = cached;
    const creation =
      anthropicCreation ??
      (isObject(candidate.inputTokens) ? num(candidate.inputTokens.cacheWrite) : undefined) ??
      detailCached(candidate, ["cache_creation"]);
    if (creation !== undefined) usage.cacheCreationTokens = creation;
    if (input !== undefined || output !== undefined) return usage;
  }
  return {};
}

function detailCached(usage: JsonObject, keys: string[]): number | undefined {
  for (const key of [
    "inputTokensDetails",
    "input_tokens_details",
    "prompt_tokens_details",
    "input_token_details",
  ]) {
    let detail = usage[key];
    if (Array.isArray(detail)) detail = detail[0] ?? null;
    if (isObject(detail)) {
      const found = num(pick(detail, keys));
      if (found !== undefined) return found;
    }
  }
  return undefined;
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

/** A tool call as a model response records it (AI SDK `tool-call` parts, OpenAI's, LangChain's). */
export function toolCallFrom(value: JsonValue): ExtractedToolCall | undefined {
  if (!isObject(value)) return undefined;
  const fn = isObject(value.function) ? value.function : undefined;
  const name = str(value.toolName) ?? str(value.name) ?? str(fn?.name);
  if (!name) return undefined;
  const call: ExtractedToolCall = {
    name,
    arguments: parseArguments(
      (pick(value, ["args", "arguments", "input"]) ?? fn?.arguments) as JsonValue | undefined,
    ),
  };
  const id = str(value.toolCallId) ?? str(value.callId) ?? str(value.call_id) ?? str(value.id);
  if (id) call.id = id;
  return call;
}

/** The text, tool calls and finish reasons of a model response. */
export function completionOf(response: JsonValue | undefined): {
  text: string;
  /** Reasoning parts (AI SDK, OpenAI Agents, Anthropic thinking): not part of the reply. */
  reasoning: string;
  toolCalls: ExtractedToolCall[];
  finishReasons: string[];
} {
  const message = response === undefined ? undefined : assistantMessage(response);
  if (!message) {
    const text = typeof response === "string" ? response : "";
    return { text, reasoning: "", toolCalls: [], finishReasons: [] };
  }
  const toolCalls: ExtractedToolCall[] = [];
  const texts: string[] = [];
  const reasoning: string[] = [];
  for (const key of ["toolCalls", "tool_calls"]) {
    const calls = message[key];
    if (Array.isArray(calls))
      for (const call of calls) {
        const found = toolCallFrom(call);
        if (found) toolCalls.push(found);
      }
  }
  // Content parts (AI SDK `content`, OpenAI Agents / Responses `output` items).
  for (const key of ["content", "output"]) {
    const parts = message[key];
    if (typeof parts === "string") {
      texts.push(parts);
      continue;
    }
    if (!Array.isArray(parts)) continue;
    for (const part of parts) {
      if (!isObject(part)) continue;
      const type = typeof part.type === "string" ? part.type : "";
      // A call the provider executed (an AI SDK provider-executed tool) is no call the agent
      // was asked to make: see hostedToolCallsOf.
      if (part.providerExecuted === true) continue;
      if (type === "tool-call" || type === "function_call" || type === "tool_use") {
        const found = toolCallFrom(part);
        if (found && !toolCalls.some((call) => call.id !== undefined && call.id === found.id))
          toolCalls.push(found);
      } else if (type === "reasoning" || type === "thinking") {
        const inner = part.text ?? part.reasoning ?? part.thinking ?? part.content ?? part.summary;
        reasoning.push(typeof inner === "string" ? inner : textOf(inner ?? null));
      } else if (type === "message" && part.content !== undefined) {
        texts.push(textOf(part.content));
      } else if (type === "text" || type === "output_text" || typeof part.text === "string") {
        texts.push(textOf([part]));
      }
    }
  }
  if (texts.length === 0 && typeof message.text === "string") texts.push(message.text);
  const finishReasons: string[] = [];
  const reason = pick(message, ["finishReason", "finish_reason", "stopReason", "stop_reason"]);
  const responseMetadata = isObject(message.response_metadata) ? message.response_metadata : {};
  const fromMetadata = pick(responseMetadata, ["finish_reason", "stop_reason"]);
  for (const candidate of [reason, fromMetadata]) {
    if (typeof candidate === "string") finishReasons.push(candidate);
    else if (isObject(candidate) && typeof candidate.unified === "string")
      finishReasons.push(candidate.unified);
  }
  return {
    text: texts.filter((text) => text.length > 0).join("\n"),
    reasoning: reasoning.filter((text) => text.length > 0).join("\n"),
    toolCalls,
    finishReasons: [...new Set(finishReasons)],
  };
}

const roleAliases: Record<string, HistoryMessage["role"]> = {
  system: "system",
  developer: "system",
  user: "user",
  human: "user",
  assistant: "assistant",
  ai: "assistant",
  model: "assistant",
  tool: "tool",
  function: "tool",
  systemmessage: "system",
  humanmessage: "user",
  aimessage: "assistant",
  aimessagechunk: "assistant",
  toolmessage: "tool",
};

function messageFrom(raw: JsonValue): HistoryMessage[] {
  const value = unwrapLangChain(raw);
  if (typeof value === "string") return [{ role: "user", content: value }];
  if (!isObject(value)) return [];
  // OpenAI Agents input items.
  if (value.type === "function_call") {
    const call = toolCallFrom(value);
    return call ? [{ role: "assistant", content: "", toolCalls: [call] }] : [];
  }
  if (value.type === "function_call_result" || value.type === "function_call_output") {
    const message: HistoryMessage = {
      role: "tool",
      content: (value.output ?? null) as JsonValue,
    };
    const id = str(value.callId) ?? str(value.call_id);
    if (id) message.toolCallId = id;
    if (str(value.name)) message.name = value.name as string;
    return [message];
  }
  const roleKey = (
    str(value.role) ??
    str(value.type) ??
    str(value.__class) ??
    (typeof value._getType === "string" ? value._getType : undefined) ??
    ""
  ).toLowerCase();
  const role = roleAliases[roleKey];
  if (!role) return [];
  const message: HistoryMessage = { role, content: (value.content ?? "") as JsonValue };
  if (role === "assistant") {
    const { toolCalls } = completionOf(value);
    if (toolCalls.length > 0) message.toolCalls = toolCalls;
  }
  const toolCallId = str(value.tool_call_id) ?? str(value.toolCallId);
  if (toolCallId) message.toolCallId = toolCallId;
  if (role === "tool" && Array.isArray(value.content)) {
    // AI SDK tool messages: [{ type: "tool-result", toolCallId, toolName, output }]
    const parts = value.content.filter(isObject);
    if (parts.length > 0 && parts.every((part) => part.type === "tool-result")) {
      return parts.map((part) => {
        const out: HistoryMessage = {
          role: "tool",
          content: (part.output ?? part.result ?? null) as JsonValue,
        };
        if (str(part.toolCallId)) out.toolCallId = part.toolCallId as string;
        if (str(part.toolName)) out.name = part.toolName as string;
        return out;
      });
    }
  }
  if (str(value.name)) message.name = value.name as string;
  return [message];
}

/** A request object's system instructions, and its list of messages (or prompt string). */
function requestParts(request: JsonObject): { system?: string; list?: JsonValue } {
  const system =
    str(request.systemInstructions) ?? str(request.system) ?? str(request.instructions);
  // `prompts`: a LangChain text LLM's prompt strings. A `prompt` object (an OpenAI Agents
  // stored prompt reference) is not a message list: the messages are then in `input`.
  const list = ["messages", "prompt", "prompts", "input"]
    .map((key) => request[key])
    .find((value) => typeof value === "string" || Array.isArray(value));
  return { ...(system && { system }), ...(list !== undefined && { list }) };
}

/** The chat messages a model request carries (`messages`, `prompt`, `input`, `systemInstructions`). */
export function requestMessages(request: JsonValue | undefined): HistoryMessage[] {
  if (request === undefined || request === null) return [];
  if (typeof request === "string") return [{ role: "user", content: request }];
  if (Array.isArray(request)) return request.flatMap((item) => messagesOfList(item));
  if (!isObject(request)) return [];
  const messages: HistoryMessage[] = [];
  const { system, list } = requestParts(request);
  if (system) messages.push({ role: "system", content: system });
  if (list !== undefined) messages.push(...messagesOfList(list));
  return messages;
}

/**
 * `requestMessages` from the last, each list item read as it is reached: a search for a
 * recent message (a tool call's answer) reads the end of a long conversation, not all of it.
 */
export function* requestMessagesNewestFirst(
  request: JsonValue | undefined,
): Generator<HistoryMessage> {
  const parts = isObject(request) ? requestParts(request) : {};
  const list = isObject(request) ? parts.list : request;
  // LangChain's list of lists, a prompt string: read whole.
  if (!Array.isArray(list) || (list.length > 0 && list.every(Array.isArray))) {
    yield* requestMessages(request).reverse();
    return;
  }
  for (let index = list.length - 1; index >= 0; index--) {
    const item = list[index] as JsonValue;
    yield* (list === request ? messagesOfList(item) : messageFrom(item)).reverse();
  }
  if (parts.system) yield { role: "system", content: parts.system };
}

function messagesOfList(list: JsonValue): HistoryMessage[] {
  if (typeof list === "string") return [{ role: "user", content: list }];
  if (!Array.isArray(list)) return messageFrom(list);
  // LangChain's handleChatModelStart passes BaseMessage[][] (one list per prompt).
  if (list.length > 0 && list.every(Array.isArray)) return messagesOfList(list[0] as JsonValue);
  return list.flatMap((item) => messageFrom(item));
}
