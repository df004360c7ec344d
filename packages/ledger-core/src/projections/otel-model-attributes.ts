import type { Attributes } from "@opentelemetry/api";
import type { JsonValue } from "../events/json.js";
import { isObject, str } from "./extract.js";
import type { AttemptRecord } from "./session-model.js";

/**
 * Whether a model call streamed: said by its request's metadata (`{ stream }`), or else by its
 * outcome's (LangChain's adapter learns it from the chunks, after the call started).
 */
export function streamOf(attempt: AttemptRecord): boolean | undefined {
  for (const metadata of [attempt.requested.metadata, attempt.outcome?.metadata]) {
    const stream = isObject(metadata) ? metadata.stream : undefined;
    if (typeof stream === "boolean") return stream;
  }
  return undefined;
}

/** `gen_ai.request.*` settings, from the request (AI SDK), `modelSettings` (OpenAI Agents) or `params` (LangChain). */
export function requestSettings(request: JsonValue): Attributes {
  const attributes: Attributes = {};
  const names: [string, string[]][] = [
    ["gen_ai.request.temperature", ["temperature"]],
    [
      "gen_ai.request.max_tokens",
      ["maxOutputTokens", "maxTokens", "max_tokens", "max_completion_tokens"],
    ],
    ["gen_ai.request.top_p", ["topP", "top_p"]],
  ];
  if (!isObject(request)) return attributes;
  for (const holder of [request, request.modelSettings, request.params]) {
    if (!isObject(holder)) continue;
    for (const [attribute, keys] of names) {
      const value = keys.map((key) => holder[key]).find((each) => typeof each === "number");
      if (typeof value === "number" && attributes[attribute] === undefined)
        attributes[attribute] = value;
    }
  }
  return attributes;
}

/**
 * OpenTelemetry's well-known `gen_ai.provider.name` values for the names frameworks give the
 * same providers: the AI SDK's provider ids (`google.generative-ai`, `amazon-bedrock`...) and
 * LangChain's `ls_provider` (`google_genai`, `bedrock`...). Other names are kept as they are, as
 * the conventions ask for a provider they do not list.
 */
const WELL_KNOWN_PROVIDERS: [RegExp, string][] = [
  [/^(google\.vertex|google_vertexai|vertex)/, "gcp.vertex_ai"],
  [/^(google\.generative-ai|google_genai|google|gemini)(\.|$)/, "gcp.gemini"],
  [/^(amazon-bedrock|amazon_bedrock|bedrock)(\.|$)/, "aws.bedrock"],
  [/^(azure-openai|azure_openai|azure)(\.|$)/, "azure.ai.openai"],
  [/^(mistral|mistralai)(\.|$)/, "mistral_ai"],
  [/^xai(\.|$)/, "x_ai"],
  [/^(watsonx|ibm)(\.|$)/, "ibm.watsonx.ai"],
];

/**
 * The provider (`openai`, `anthropic`...) when a request or response says, or else the
 * `provider` an adapter put in the call's metadata (LangChain's `ls_provider`), as
 * OpenTelemetry names it. Never `system`: in a request (Anthropic's Messages API) that is the
 * system prompt.
 */
export function providerNameOf(...values: (JsonValue | undefined)[]): string | undefined {
  for (const value of values) {
    if (!isObject(value)) continue;
    const found =
      str(value.provider) ??
      str(value.providerName) ??
      str(value.provider_name) ??
      (isObject(value.model) ? str(value.model.provider) : undefined);
    if (!found) continue;
    const lower = found.toLowerCase();
    for (const [pattern, name] of WELL_KNOWN_PROVIDERS) if (pattern.test(lower)) return name;
    // AI SDK providers are named like "openai.chat": the part before the dot.
    return lower.split(".")[0];
  }
  return undefined;
}
