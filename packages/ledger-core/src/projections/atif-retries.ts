import type { JsonObject } from "../events/json.js";
import { errorText } from "./atif-run-ends.js";
import type { AtifMetrics } from "./atif-types.js";
import { completionOf } from "./model-completions.js";
import { usageOf } from "./model-usage.js";
import { type AttemptRecord, payloadOf } from "./session-model.js";

// How an ATIF trajectory shows a call made more than once: a retry inside a run (the AI SDK's
// `maxRetries`, LangChain's `withRetry`, the OpenAI Agents runner's retry) or a call in flight
// at a crash made again on resume. Each is a new attempt with `retryOf`; the chain is one call.

/** The attempt a model call's chain is shown by: the one that completed, else the last. */
export function shownAttemptOf(chain: AttemptRecord[]): AttemptRecord {
  for (let index = chain.length - 1; index >= 0; index--)
    if (chain[index]?.status === "completed") return chain[index] as AttemptRecord;
  return chain[chain.length - 1] as AttemptRecord;
}

/** The ATIF metrics of a model attempt's usage (of its response, or of what a failed one had). */
export function attemptMetrics(attempt: AttemptRecord): AtifMetrics {
  const outcome = payloadOf(attempt.outcome);
  const usage = usageOf(attempt.status === "completed" ? outcome.response : outcome.partial);
  const metrics: AtifMetrics = {};
  if (usage.inputTokens !== undefined) metrics.prompt_tokens = usage.inputTokens;
  if (usage.outputTokens !== undefined) metrics.completion_tokens = usage.outputTokens;
  if (usage.cachedTokens !== undefined) metrics.cached_tokens = usage.cachedTokens;
  return metrics;
}

/** Token counts of a trajectory's `final_metrics`, as they add up. */
export interface TokenTotals {
  prompt: number;
  completion: number;
  cached: number;
}

/** Adds the token counts of `metrics` to `totals`. */
export function addTokens(totals: TokenTotals, metrics: AtifMetrics | undefined): void {
  totals.prompt += metrics?.prompt_tokens ?? 0;
  totals.completion += metrics?.completion_tokens ?? 0;
  totals.cached += metrics?.cached_tokens ?? 0;
}

/**
 * What a model attempt that did not complete had: its error (or why it was abandoned) and the
 * text that had arrived. Never the step's `message`: that is the assistant's reply, and
 * training data must not learn an error text or half a sentence as one.
 */
export function unfinishedExtra(attempt: AttemptRecord): JsonObject {
  if (attempt.status === "completed") return {};
  const outcome = payloadOf(attempt.outcome);
  const extra: JsonObject = {};
  if (attempt.status === "failed") extra.error = errorText(outcome);
  if (attempt.status === "abandoned") extra.reason = String(outcome.reason ?? "");
  const partial = completionOf(outcome.partial);
  if (partial.text) extra.partial_message = partial.text;
  if (partial.reasoning) extra.partial_reasoning = partial.reasoning;
  return extra;
}

/**
 * The attempts of a model call's chain other than the one shown, as its step's `extra` says
 * them (ids, status, error, what had arrived, the tokens they used).
 */
export function retriedAttemptsOf(chain: AttemptRecord[], shown: AttemptRecord): JsonObject[] {
  return chain
    .filter((link) => link !== shown)
    .map((link) => {
      const metrics = attemptMetrics(link);
      return {
        attempt_id: link.attemptId,
        status: link.status,
        ...unfinishedExtra(link),
        ...(Object.keys(metrics).length > 0 ? { metrics: { ...metrics } } : {}),
      };
    });
}
