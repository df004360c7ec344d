import type { JsonObject } from "@agent-ledger/core";
import type { LanguageModelV3, LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { toJsonValue } from "./plain-json.js";

// Settings that change what the model answers. Never headers, abortSignal or credentials.
const SETTINGS = [
  "maxOutputTokens",
  "temperature",
  "stopSequences",
  "topP",
  "topK",
  "presencePenalty",
  "frequencyPenalty",
  "responseFormat",
  "seed",
  "tools",
  "toolChoice",
  "includeRawChunks",
  "providerOptions",
] as const satisfies readonly (keyof LanguageModelV3CallOptions)[];

/** The `model.requested` payload of a call: plain JSON, deterministic across re-executions. */
export function modelRequestOf(
  params: LanguageModelV3CallOptions,
  model: Pick<LanguageModelV3, "provider" | "modelId">,
): JsonObject {
  const request: Record<string, unknown> = {
    model: { provider: model.provider, modelId: model.modelId },
    prompt: params.prompt,
  };
  for (const key of SETTINGS) if (params[key] !== undefined) request[key] = params[key];
  return toJsonValue(request, "$.request") as JsonObject;
}
