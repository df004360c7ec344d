import type { JsonObject, JsonValue } from "../events/json.js";
import { type ExtractedToolCall, isObject, str, toolCallFrom } from "./extract.js";
import { unwrapLangChain } from "./langchain-message.js";
import { completionOf, reasoningTextOf } from "./model-completions.js";

// The chat messages a model's recorded request carries (see extract.ts), each normalised to
// OpenAI-style roles, in order or newest first.

/** One chat message, normalised (roles as in OpenAI-style chat). */
export interface HistoryMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: JsonValue;
  toolCalls?: ExtractedToolCall[];
  toolCallId?: string;
  name?: string;
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

/** The OpenAI Agents input items that answer a tool call (`function_call_output`: the API's). */
const TOOL_RESULT_ITEMS: ReadonlySet<JsonValue | undefined> = new Set([
  "function_call_result",
  "function_call_output",
  "computer_call_result",
]);

function messageFrom(raw: JsonValue): HistoryMessage[] {
  const value = unwrapLangChain(raw);
  if (typeof value === "string") return [{ role: "user", content: value }];
  if (!isObject(value)) return [];
  // OpenAI Agents input items.
  if (value.type === "function_call") {
    const call = toolCallFrom(value);
    return call ? [{ role: "assistant", content: "", toolCalls: [call] }] : [];
  }
  if (value.type === "reasoning") {
    // OpenAI Agents' reasoning item (agents-core types/protocol.mjs:591): the summary the
    // Responses API gave, in `content`, read as a response's reasoning is (`reasoningTextOf`).
    const text = reasoningTextOf(value) ?? "";
    return text.length > 0 ? [{ role: "assistant", content: [{ type: "reasoning", text }] }] : [];
  }
  // A computer call's result (agents-core types/protocol.mjs:501) answers its call too: its
  // output a screenshot.
  if (TOOL_RESULT_ITEMS.has(value.type)) {
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

/**
 * A model request's system instructions given apart from its messages (OpenAI Agents'
 * `systemInstructions`, Anthropic's `system`, `instructions`), and its messages (`messages`,
 * `prompt`, `input`): a system message inside the list stays in `messages`.
 */
export function requestConversation(request: JsonValue | undefined): {
  system?: string;
  messages: HistoryMessage[];
} {
  if (request === undefined || request === null) return { messages: [] };
  if (typeof request === "string") return { messages: [{ role: "user", content: request }] };
  if (Array.isArray(request)) return { messages: messagesOfItems(request, messagesOfList) };
  if (!isObject(request)) return { messages: [] };
  const { system, list } = requestParts(request);
  const messages = list === undefined ? [] : messagesOfList(list);
  return system ? { system, messages } : { messages };
}

/** The chat messages a model request carries (`messages`, `prompt`, `input`, `systemInstructions`). */
export function requestMessages(request: JsonValue | undefined): HistoryMessage[] {
  const { system, messages } = requestConversation(request);
  return system ? [{ role: "system", content: system }, ...messages] : messages;
}

/**
 * `requestMessages` from the last, each list item read as it is reached: a search for a
 * recent message (a tool call's answer) reads the end of a long conversation, not all of it.
 * Consecutive `function_call` items come one message each: a search needs them no more grouped.
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
  return messagesOfItems(list, messageFrom);
}

/** The OpenAI Agents items whose message the function_call items after them join. */
const TURN_ITEMS: ReadonlySet<JsonValue | undefined> = new Set(["function_call", "reasoning"]);

function isFunctionCall(item: JsonValue): boolean {
  return isObject(item) && item.type === "function_call";
}

/**
 * The messages of a list's items, each read by `messagesOf`. OpenAI Agents records each tool call of
 * an answer as an input item of its own (`function_call`), and its reasoning too (`reasoning`):
 * consecutive calls, and the reasoning before them, are one assistant message with all of them,
 * the turn the model met them as (the SDK's chat completions converter sends them so,
 * openaiChatCompletionsConverter.mjs:302 and :370; an assistant `message` item after a reasoning
 * one, or before the calls, stays a message of its own there too).
 * A call without a name is read as nothing and parts no calls.
 */
function messagesOfItems(
  items: JsonValue[],
  messagesOf: (item: JsonValue) => HistoryMessage[],
): HistoryMessage[] {
  const messages: HistoryMessage[] = [];
  // The assistant message the function_call items that come next join: read fresh from the
  // item that opened it, so it is this list's own to add to.
  let open: HistoryMessage | undefined;
  for (const item of items) {
    const read = messagesOf(item);
    if (open !== undefined && isFunctionCall(item)) {
      open.toolCalls ??= [];
      open.toolCalls.push(...(read[0]?.toolCalls ?? []));
      continue;
    }
    messages.push(...read);
    open = isObject(item) && TURN_ITEMS.has(item.type) ? read[0] : undefined;
  }
  return messages;
}
