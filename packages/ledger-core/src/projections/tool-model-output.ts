import type { JsonValue } from "../events/json.js";
import { isObject } from "./langchain-message.js";

// A tool's answer as a framework gives it to the model: not the result itself but wrapped, in
// the AI SDK in a tool output for the model (`LanguageModelV3ToolResultOutput`, in an AI SDK
// tool message's `tool-result` part), which each provider unwraps into what it sends; in OpenAI
// Agents a text output (`{ type: "text", text }`, a `function_call_result`'s `output`), which
// the SDK sends as its text.

/** What an AI SDK tool output gives the model: one value, or (`content`) a list of parts. */
export type ModelOutput =
  | { kind: "value"; value: JsonValue }
  | { kind: "parts"; parts: JsonValue[] };

/** The outputs holding the result itself in `value` (`createToolModelOutput` makes them). */
const VALUE_OUTPUTS: ReadonlySet<JsonValue | undefined> = new Set([
  "text",
  "json",
  "error-text",
  "error-json",
]);

/**
 * The result an AI SDK tool output for the model wraps, as its providers unwrap it (their
 * message conversion, e.g. `convertToOpenAIChatMessages`): the `value` of a `text`, `json`,
 * `error-text` or `error-json` output, the parts of a `content` one, and an `execution-denied`
 * one's reason (the words the providers send when it has none); the text of OpenAI Agents'
 * text output (its Responses model's `normalizeFunctionCallOutputForRequest`). Undefined for any
 * other value: a tool's own result, whatever its shape.
 */
export function modelOutputOf(content: JsonValue | undefined): ModelOutput | undefined {
  if (!isObject(content)) return undefined;
  if (VALUE_OUTPUTS.has(content.type) && "value" in content)
    return { kind: "value", value: content.value ?? null };
  if (content.type === "content" && Array.isArray(content.value))
    return { kind: "parts", parts: content.value };
  if (content.type === "text" && typeof content.text === "string")
    return { kind: "value", value: content.text };
  if (content.type === "execution-denied") {
    const reason = content.reason;
    return { kind: "value", value: typeof reason === "string" ? reason : "Tool execution denied." };
  }
  return undefined;
}
