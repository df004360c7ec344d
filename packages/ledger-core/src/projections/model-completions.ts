import type { JsonObject, JsonValue } from "../events/json.js";
import {
  assistantMessage,
  type ExtractedToolCall,
  isObject,
  pick,
  textOf,
  toolCallFrom,
} from "./extract.js";

// What a model's recorded response says (see extract.ts): its text, reasoning, the tool calls
// it asked for and why it stopped.

/**
 * The text of a reasoning part (the AI SDK's and OpenAI Agents' `reasoning`, Anthropic's
 * `thinking`), in a response or in a request's earlier assistant turn; undefined for any other
 * part.
 */
export function reasoningTextOf(part: JsonObject): string | undefined {
  if (part.type !== "reasoning" && part.type !== "thinking") return undefined;
  const inner = part.text ?? part.reasoning ?? part.thinking ?? part.content ?? part.summary;
  return typeof inner === "string" ? inner : textOf(inner ?? null);
}

/** The text, tool calls and finish reasons of a model response (`completionOf`). */
export interface Completion {
  text: string;
  /** Reasoning parts (AI SDK, OpenAI Agents, Anthropic thinking): not part of the reply. */
  reasoning: string;
  toolCalls: ExtractedToolCall[];
  finishReasons: string[];
}

/** The text, tool calls and finish reasons of a model response. */
export function completionOf(response: JsonValue | undefined): Completion {
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
        reasoning.push(reasoningTextOf(part) ?? "");
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
