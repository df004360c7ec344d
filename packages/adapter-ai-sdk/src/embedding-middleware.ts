import type { JsonObject, KnownKeys, Redaction, SessionRecorder } from "@agent-ledger/core";
import type { EmbeddingModelV3Middleware, EmbeddingModelV3Result } from "@ai-sdk/provider";
import { checkedOptional, checkedOptions } from "./adapter-options.js";
import { adapterStateOf } from "./adapter-state.js";
import {
  beginAttempt,
  recordCompletion,
  recordFailure,
  replayedFailure,
  retryAttempt,
} from "./model-attempt.js";
import { embeddingRequestOf, redactOption } from "./model-request.js";
import { toJsonValue } from "./plain-json.js";
import { callStateOf } from "./tool-call-context.js";

export interface LedgerEmbeddingMiddlewareOptions {
  /** The recorder of the run (the same one the language model's `ledgerMiddleware` records to). */
  recorder: SessionRecorder;
  /** As for `ledgerMiddleware`: what to remove from each request before it is recorded. */
  redact?: Redaction | false;
  /**
   * Record the vectors themselves, so that a resumed run is answered from the ledger instead of
   * calling the provider again. Default false: a vector is some kilobytes per text, so the
   * ledger keeps how many there were, their dimensions and the usage, and a call recorded
   * before a crash is made again on resume (a retry of the recorded attempt).
   */
  recordEmbeddings?: boolean;
}

/**
 * The `model.completed` response of an embedding call, as plain JSON: converted as every
 * recorded value is (a vector's `-0` is recorded as 0, which the ledger would refuse as it is).
 */
function embeddingResponseOf(result: EmbeddingModelV3Result, withVectors: boolean): JsonObject {
  const response: Record<string, unknown> = {
    count: result.embeddings.length,
    dimensions: result.embeddings[0]?.length ?? 0,
  };
  if (result.usage !== undefined) response.usage = { inputTokens: result.usage.tokens };
  if (result.providerMetadata !== undefined) response.providerMetadata = result.providerMetadata;
  if (withVectors) response.embeddings = result.embeddings;
  return toJsonValue(response) as JsonObject;
}

/** A recorded response that holds the vectors: what a resumed run is answered with. */
function recordedResult(response: unknown): EmbeddingModelV3Result | undefined {
  const recorded = response as { embeddings?: unknown; usage?: { inputTokens?: unknown } } | null;
  if (!Array.isArray(recorded?.embeddings)) return undefined;
  const result: EmbeddingModelV3Result = {
    embeddings: recorded.embeddings as number[][],
    warnings: [],
  };
  if (typeof recorded.usage?.inputTokens === "number")
    result.usage = { tokens: recorded.usage.inputTokens };
  return result;
}

const EMBEDDING_MIDDLEWARE_OPTIONS: KnownKeys<LedgerEmbeddingMiddlewareOptions> = {
  recorder: true,
  redact: true,
  recordEmbeddings: true,
};

/**
 * An `EmbeddingModelV3Middleware` (for `wrapEmbeddingModel`) that records every embedding call
 * of a run as a model call: `model.requested` (`operation: "embeddings"`, the model, the texts)
 * committed before the provider is called, then `model.completed` with the count, dimensions
 * and token usage (the vectors too with `recordEmbeddings`), or `model.failed`. On a resumed
 * run a recorded call is answered from the ledger when it holds the vectors; otherwise it is
 * made again as a retry of the recorded attempt (embedding calls are idempotent), as is a call
 * a crash left in flight. A recorded failure is thrown again, so the SDK retries as it did;
 * but a call its caller aborted (`abortSignal`: the user stopped, a timeout) got no answer, and
 * is asked again on resume, as a language model's call is (`aiSdk.abortedByCaller`).
 * Its calls take the same path as a language model's (`beginAttempt`, `recordFailure`) and
 * share its recorder's state: a run the ledger stopped refuses them too.
 */
export function ledgerEmbeddingMiddleware(
  options: LedgerEmbeddingMiddlewareOptions,
): EmbeddingModelV3Middleware {
  const {
    recorder,
    redact: redaction,
    recordEmbeddings,
  } = checkedOptions<LedgerEmbeddingMiddlewareOptions>(
    options,
    EMBEDDING_MIDDLEWARE_OPTIONS,
    "ledgerEmbeddingMiddleware",
  );
  checkedOptional(recordEmbeddings, "$.recordEmbeddings", "boolean");
  const redact = redactOption(redaction);
  const recorderState = adapterStateOf(recorder);
  const withVectors = recordEmbeddings === true;
  return {
    specificationVersion: "v3",
    async wrapEmbed({ doEmbed, params, model }) {
      // Inside one of this recorder's wrapped tools: recorded on the tool call's child run, in
      // flight there until its outcome is recorded (the run is not closed before).
      const state = callStateOf(recorderState);
      const embed = async (): Promise<EmbeddingModelV3Result> => {
        let attempt = await beginAttempt(state, () => embeddingRequestOf(params, model, redact));
        // Recorded without its vectors: made again, as a retry of the recorded call. An earlier
        // resume's retry is answered from the ledger the same way, so each resume adds one.
        while (attempt.replayed?.status === "completed") {
          const result = recordedResult(attempt.replayed.result);
          state.modelAnswered(attempt);
          if (result !== undefined) return result;
          attempt = await retryAttempt(state, attempt);
        }
        if (attempt.replayed) throw replayedFailure(state, attempt);
        let result: EmbeddingModelV3Result;
        try {
          result = await doEmbed();
        } catch (error) {
          // Aborted by its caller (the user stopped, a timeout): asked again on resume.
          throw await recordFailure(state, attempt, error, {
            aborted: params.abortSignal?.aborted === true,
          });
        }
        await recordCompletion(state, attempt, () => embeddingResponseOf(result, withVectors));
        return result;
      };
      return state.track(embed());
    },
  };
}
