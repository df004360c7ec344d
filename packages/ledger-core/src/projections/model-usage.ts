import type { JsonObject, JsonValue } from "../events/json.js";
import { assistantMessage, isObject, num, pick } from "./extract.js";
import { unwrapLangChain } from "./langchain-message.js";

// A model call's token counts, read from the usage its recorded response carries in each
// framework's shape (see extract.ts).

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
