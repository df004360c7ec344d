import { type JsonObject, type JsonValue, withoutUrlCredentials } from "@agent-ledger/core";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { LLMResult } from "@langchain/core/outputs";
import { isRecord, messageToJson, safeParams, toJsonValue } from "./plain-json.js";

/** The model id: invocation `model`/`model_name`, else LangSmith's, else the class name. */
export function modelId(
  llm: Serialized,
  extraParams: Record<string, unknown> | undefined,
  metadata: Record<string, unknown> | undefined,
): string {
  const params = isRecord(extraParams?.invocation_params) ? extraParams.invocation_params : {};
  for (const candidate of [
    params.model,
    params.model_name,
    params.modelName,
    metadata?.ls_model_name,
  ]) {
    if (typeof candidate === "string" && candidate.length > 0) return candidate;
  }
  const id = (llm as { id?: unknown }).id;
  return Array.isArray(id) && typeof id.at(-1) === "string" ? (id.at(-1) as string) : "unknown";
}

/**
 * A chat model request as plain, deterministic JSON (no ids, no secrets: the password and
 * credential parameters of a URL in a message, a DSN a person pasted, are `***`). A call made through
 * `withStructuredOutput` also carries `structuredOutput: { method }` (see `structuredOutputOf`).
 */
export function chatRequest(options: {
  llm: Serialized;
  messages: BaseMessage[][];
  extraParams?: Record<string, unknown> | undefined;
  metadata?: Record<string, unknown> | undefined;
}): JsonObject {
  const lists = options.messages.map((list) => list.map(messageToJson));
  const request: JsonObject = {
    model: modelId(options.llm, options.extraParams, options.metadata),
    messages: withoutUrlCredentials(lists.length === 1 ? (lists[0] as JsonValue[]) : lists),
    params: safeParams(options.extraParams?.invocation_params),
  };
  const structuredOutput = structuredOutputOf(options.extraParams);
  if (structuredOutput !== undefined) request.structuredOutput = structuredOutput;
  return request;
}

/**
 * How a call asks for structured output: the providers' `withStructuredOutput` (and
 * createAgent's `responseFormat`) pass `ls_structured_output_format: { kwargs: { method } }`
 * in the call options, which LangChain hands the start callback as `extraParams.options`.
 * Only its method is kept (the schema is in the request's tools or params already, if sent).
 * With `functionCalling` the answer is a tool call that no tool node runs (restoreMessages).
 */
function structuredOutputOf(
  extraParams: Record<string, unknown> | undefined,
): JsonObject | undefined {
  const options = extraParams?.options;
  const format = isRecord(options) ? options.ls_structured_output_format : undefined;
  if (!isRecord(format)) return undefined;
  const kwargs = format.kwargs;
  const method = isRecord(kwargs) && typeof kwargs.method === "string" ? kwargs.method : null;
  return { method: toJsonValue(method) };
}

/** A text LLM request, its prompts' URLs redacted as a chat request's messages are. */
export function textRequest(options: {
  llm: Serialized;
  prompts: string[];
  extraParams?: Record<string, unknown> | undefined;
  metadata?: Record<string, unknown> | undefined;
}): JsonObject {
  return {
    model: modelId(options.llm, options.extraParams, options.metadata),
    prompts: withoutUrlCredentials(options.prompts.map((prompt) => toJsonValue(prompt))),
    params: safeParams(options.extraParams?.invocation_params),
  };
}

export interface ToolCallJson {
  id?: string;
  name: string;
  args: JsonValue;
}

/** The completion: generations, the tool calls they ask for and token usage. */
export function modelResponse(output: LLMResult): {
  response: JsonObject;
  toolCalls: ToolCallJson[];
} {
  const toolCalls: ToolCallJson[] = [];
  let usage: JsonValue = null;
  const generations = output.generations.map((list) =>
    list.map((generation) => {
      const result: JsonObject = { text: toJsonValue(generation.text ?? "") };
      const message = (generation as { message?: BaseMessage }).message;
      if (message) {
        result.message = messageToJson(message);
        const calls = (message as { tool_calls?: { id?: string; name: string; args: unknown }[] })
          .tool_calls;
        for (const call of calls ?? []) {
          const json: ToolCallJson = { name: call.name, args: toJsonValue(call.args) };
          if (typeof call.id === "string") json.id = call.id;
          toolCalls.push(json);
        }
        const metadata = (message as { usage_metadata?: unknown }).usage_metadata;
        if (metadata !== undefined && usage === null) usage = toJsonValue(metadata);
      }
      if (generation.generationInfo !== undefined)
        result.generationInfo = toJsonValue(generation.generationInfo);
      return result;
    }),
  );
  const llmOutput = toJsonValue(output.llmOutput ?? null);
  if (usage === null && isRecord(llmOutput) && llmOutput.tokenUsage !== undefined)
    usage = llmOutput.tokenUsage as JsonValue;
  return {
    response: {
      generations,
      toolCalls: toolCalls as unknown as JsonValue[],
      usage,
      llmOutput,
    },
    toolCalls,
  };
}
