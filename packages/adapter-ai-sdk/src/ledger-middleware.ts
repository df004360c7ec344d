import type { Attempt, JsonObject, Redaction, SessionRecorder } from "@agent-ledger/core";
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Middleware,
  LanguageModelV3StreamResult,
} from "@ai-sdk/provider";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import { modelRequestOf, redactOption } from "./model-request.js";
import { decodeGenerateResult, encodeModelResponse, toolCallIdsOf } from "./model-response.js";
import { recordStream, replayStream } from "./record-stream.js";
import { AttemptAbandonedError, failureMetadataOf, rebuildError } from "./replayed-errors.js";

export interface LedgerMiddlewareOptions {
  /** The recorder of the run (a new one, or one from `SessionRecorder.resume` to replay). */
  recorder: SessionRecorder;
  /**
   * What to remove from each request before it is hashed and recorded. Default
   * `DEFAULT_CREDENTIAL_PATHS` (API keys, tokens and authorization headers anywhere in the
   * request, e.g. in `providerOptions`); give your own list or function to replace it, or
   * `false` to record the request as built. Headers are never recorded.
   */
  redact?: Redaction | false;
}

/**
 * Commits `model.requested` for the request `requestOf` builds (a language or embedding
 * model's; built once the run has started, so a request refused as not plain JSON is refused
 * on a started run) before the call (a retry of the SDK, same request right after a failure of
 * this step, becomes a new attempt with `retryOf`). On a resumed run a recorded call is
 * answered from the ledger instead.
 */
export async function beginAttempt(
  state: AdapterState,
  requestOf: () => JsonObject,
): Promise<Attempt> {
  state.assertOpen();
  await state.ensureStarted();
  const { recorder } = state;
  const request = requestOf();
  const previous = state.lastModel;
  let attempt: Attempt;
  // Hashing a long conversation costs a pass over it: only when a failed call may be retried.
  // On resume, `retry` answers a retry the crashed process already made from the ledger.
  if (previous?.failed && recorder.sameModelRequest(previous.attempt, request)) {
    attempt = await recorder.retry(previous.attempt);
  } else {
    attempt = await recorder.beforeModelCall({ request });
  }
  state.lastModel = { attempt, failed: false };
  return attempt;
}

/** Records the failure (with what had arrived) and returns the error the caller must see. */
export async function recordFailure(
  state: AdapterState,
  attempt: Attempt,
  error: unknown,
  partial?: unknown,
): Promise<unknown> {
  if (state.lastModel?.attempt === attempt) state.lastModel.failed = true;
  try {
    const metadata = failureMetadataOf(error);
    await state.recorder.modelFailed(attempt, error, {
      ...(metadata ? { metadata } : {}),
      ...(partial !== undefined ? { partial } : {}),
    });
    return error;
  } catch (ledgerError) {
    // The failure is not durable: fail closed, the run stops here.
    state.block(ledgerError);
    return ledgerError;
  }
}

/** The error a recorded failure stands for (thrown again on replay). */
export function replayedFailure(state: AdapterState, attempt: Attempt): Error {
  const replayed = attempt.replayed;
  if (state.lastModel?.attempt === attempt) state.lastModel.failed = true;
  if (replayed?.status === "failed") return rebuildError(replayed.error, replayed.metadata);
  return new AttemptAbandonedError(
    `model call ${attempt.attemptId}`,
    replayed?.status === "abandoned" ? replayed.reason : "unknown",
  );
}

async function wrapGenerate(
  state: AdapterState,
  redact: Redaction | false | undefined,
  options: {
    doGenerate: () => PromiseLike<LanguageModelV3GenerateResult>;
    params: LanguageModelV3CallOptions;
    model: LanguageModelV3;
  },
): Promise<LanguageModelV3GenerateResult> {
  const attempt = await beginAttempt(state, () =>
    modelRequestOf(options.params, options.model, redact),
  );
  const replayed = attempt.replayed;
  if (replayed?.status === "completed") {
    const result = decodeGenerateResult(replayed.result);
    state.resolveCauses(toolCallIdsOf(result.content), replayed.eventId);
    return result;
  }
  if (replayed) throw replayedFailure(state, attempt);
  let result: LanguageModelV3GenerateResult;
  try {
    result = await options.doGenerate();
  } catch (error) {
    throw await recordFailure(state, attempt, error);
  }
  const toolCallIds = toolCallIdsOf(result.content);
  try {
    const completed = await state.recorder.modelCompleted(attempt, encodeModelResponse(result));
    state.resolveCauses(toolCallIds, completed.eventId);
  } catch (ledgerError) {
    state.block(ledgerError);
    state.rejectCauses(toolCallIds, ledgerError);
    throw ledgerError;
  }
  return result;
}

async function wrapStream(
  state: AdapterState,
  redact: Redaction | false | undefined,
  options: {
    doStream: () => PromiseLike<LanguageModelV3StreamResult>;
    params: LanguageModelV3CallOptions;
    model: LanguageModelV3;
  },
): Promise<LanguageModelV3StreamResult> {
  const attempt = await beginAttempt(state, () =>
    modelRequestOf(options.params, options.model, redact),
  );
  const replayed = attempt.replayed;
  if (replayed) return replayStream(state, attempt);
  let result: LanguageModelV3StreamResult;
  try {
    result = await options.doStream();
  } catch (error) {
    throw await recordFailure(state, attempt, error);
  }
  return {
    ...result,
    stream: recordStream({
      state,
      attempt,
      source: result.stream,
      abortSignal: options.params.abortSignal,
    }),
  };
}

/**
 * A `LanguageModelV3Middleware` (for `wrapLanguageModel`) that records every model call of a
 * run: `model.requested` is committed before the provider is called (if that fails, the
 * provider is not called and the caller gets the `LedgerError`), then `model.completed` or
 * `model.failed`. With a recorder from `SessionRecorder.resume`, calls recorded before a crash
 * are answered from the ledger (a stream is re-emitted from its recorded content).
 */
export function ledgerMiddleware(options: LedgerMiddlewareOptions): LanguageModelV3Middleware {
  const state = adapterStateOf(options.recorder);
  const redact = redactOption(options.redact);
  return {
    specificationVersion: "v3",
    wrapGenerate: (call) => wrapGenerate(state, redact, call),
    wrapStream: (call) => wrapStream(state, redact, call),
  };
}
