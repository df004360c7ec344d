import type {
  Attempt,
  JsonObject,
  KnownKeys,
  Redaction,
  SessionRecorder,
} from "@agent-ledger/core";
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Middleware,
  LanguageModelV3StreamResult,
} from "@ai-sdk/provider";
import { checkedOptions } from "./adapter-options.js";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import type { AgentCallClaim } from "./agent-call-claim.js";
import { recordDeniedApprovals } from "./denied-approvals.js";
import { beginAttempt, recordCompletion, recordFailure, replayedFailure } from "./model-attempt.js";
import { modelRequestOf, redactOption } from "./model-request.js";
import { decodeGenerateResult, encodeModelResponse, toolCallIdsOf } from "./model-response.js";
import { recordStream, replayStream } from "./record-stream.js";
import { callStateOf } from "./tool-call-context.js";
import { toolCallbackOf } from "./tool-callback-context.js";
import { refuseUndecidedToolResults } from "./undecided-tool-results.js";

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

/** What `ledgerMiddleware` refuses any other option key against (`redcat` is not `redact`). */
const LEDGER_MIDDLEWARE_OPTIONS: KnownKeys<LedgerMiddlewareOptions> = {
  recorder: true,
  redact: true,
};

/**
 * The state a call records with: inside one of this recorder's wrapped tools, the tool call's
 * child run's; elsewhere the run's, once the call has claimed it (`claimAgentCall`: a second
 * agent running on the recorder is refused there, before anything is recorded or the provider
 * is called).
 */
async function claimedState(
  state: AdapterState,
  abortSignal: AbortSignal | undefined,
): Promise<{ callState: AdapterState; agentCall: AgentCallClaim | undefined }> {
  const callState = callStateOf(state);
  const agentCall =
    callState === state
      ? await state.claimAgentCall(abortSignal, toolCallbackOf(state))
      : undefined;
  return { callState, agentCall };
}

async function wrapGenerate(
  state: AdapterState,
  agentCall: AgentCallClaim | undefined,
  redact: Redaction | false | undefined,
  options: {
    doGenerate: () => PromiseLike<LanguageModelV3GenerateResult>;
    params: LanguageModelV3CallOptions;
    model: LanguageModelV3;
  },
): Promise<LanguageModelV3GenerateResult> {
  const requestOf = checkedRequestOf(state, options, redact);
  const attempt = await begin(state, agentCall, { params: options.params, requestOf }, false);
  const replayed = attempt.replayed;
  if (replayed?.status === "completed") {
    const result = decodeGenerateResult(replayed.result);
    state.modelAnswered(attempt);
    state.causes.resolve(toolCallIdsOf(result.content), replayed.eventId);
    return result;
  }
  if (replayed) throw replayedFailure(state, attempt);
  let result: LanguageModelV3GenerateResult;
  try {
    result = await options.doGenerate();
  } catch (error) {
    throw await recordFailure(state, attempt, error, {
      aborted: options.params.abortSignal?.aborted === true,
    });
  }
  const toolCallIds = toolCallIdsOf(result.content);
  try {
    const completed = await recordCompletion(state, attempt, () => encodeModelResponse(result));
    state.causes.resolve(toolCallIds, completed.eventId);
  } catch (error) {
    state.causes.reject(toolCallIds, error);
    throw error;
  }
  return result;
}

async function wrapStream(
  state: AdapterState,
  agentCall: AgentCallClaim | undefined,
  redact: Redaction | false | undefined,
  options: {
    doStream: () => PromiseLike<LanguageModelV3StreamResult>;
    params: LanguageModelV3CallOptions;
    model: LanguageModelV3;
  },
): Promise<LanguageModelV3StreamResult> {
  const requestOf = checkedRequestOf(state, options, redact);
  const attempt = await begin(state, agentCall, { params: options.params, requestOf }, true);
  const replayed = attempt.replayed;
  if (replayed) return replayStream(state, attempt);
  let result: LanguageModelV3StreamResult;
  try {
    result = await options.doStream();
  } catch (error) {
    throw await recordFailure(state, attempt, error, {
      aborted: options.params.abortSignal?.aborted === true,
    });
  }
  return {
    ...result,
    stream: recordStream({
      state,
      attempt,
      source: result.stream,
      abortSignal: options.params.abortSignal,
      // A JSON response format is what streamObject asks for.
      kind:
        options.params.responseFormat?.type === "json"
          ? "an object stream, as streamObject makes"
          : "a text stream",
    }),
  };
}

/**
 * The call's request, built once no tool result in its prompt is of a tool call the resumed
 * ledger holds undecided (`refuseUndecidedToolResults`): refused before anything is recorded
 * or the provider is called.
 */
function checkedRequestOf(
  state: AdapterState,
  { params, model }: { params: LanguageModelV3CallOptions; model: LanguageModelV3 },
  redact: Redaction | false | undefined,
): () => JsonObject {
  return () => {
    refuseUndecidedToolResults(state.recorder, params.prompt);
    return modelRequestOf(params, model, redact);
  };
}

/**
 * Begins the call's attempt, once the denials of approval requests its prompt carries are
 * recorded (`recordDeniedApprovals`), saying in its metadata whether it streams (OpenTelemetry's
 * `gen_ai.request.stream`; metadata, not the request, whose hash replay compares). An agent's
 * call (`agentCall`: made outside a wrapped tool, having claimed the run) holds the claim until
 * the attempt is answered, or gives it back if it could not begin.
 */
async function begin(
  state: AdapterState,
  agentCall: AgentCallClaim | undefined,
  { params, requestOf }: { params: LanguageModelV3CallOptions; requestOf: () => JsonObject },
  stream: boolean,
): Promise<Attempt> {
  const metadata = { stream };
  let attempt: Attempt | undefined;
  try {
    await deniedFirst(state, params);
    attempt = await beginAttempt(state, requestOf, metadata);
    return attempt;
  } finally {
    if (agentCall) state.agentCallBegan(agentCall, attempt);
  }
}

/** Records the denials the call's prompt carries (`recordDeniedApprovals`) on an open run. */
async function deniedFirst(state: AdapterState, params: LanguageModelV3CallOptions) {
  state.assertOpen();
  try {
    await recordDeniedApprovals(state, params.prompt);
  } catch (error) {
    state.refused(error);
    throw error;
  }
}

/**
 * A `LanguageModelV3Middleware` (for `wrapLanguageModel`) that records every model call of a
 * run: `model.requested` is committed before the provider is called (if that fails, the
 * provider is not called and the caller gets the `LedgerError`), then `model.completed` or
 * `model.failed`. With a recorder from `SessionRecorder.resume`, calls recorded before a crash
 * are answered from the ledger (a stream is re-emitted from its recorded content). Bad options
 * are refused here (`invalid-argument`, with the option's path), an unknown one among them.
 */
export function ledgerMiddleware(options: LedgerMiddlewareOptions): LanguageModelV3Middleware {
  const { recorder, redact: redaction } = checkedOptions<LedgerMiddlewareOptions>(
    options,
    LEDGER_MIDDLEWARE_OPTIONS,
    "ledgerMiddleware",
  );
  const redact = redactOption(redaction);
  const state = adapterStateOf(recorder);
  return {
    specificationVersion: "v3",
    // Each call is in flight on the run it is recorded on until its outcome is recorded (a
    // stream's, once it is handed out, until its end): the run is not closed before.
    wrapGenerate: async (call) => {
      const { callState, agentCall } = await claimedState(state, call.params.abortSignal);
      return callState.track(wrapGenerate(callState, agentCall, redact, call));
    },
    wrapStream: async (call) => {
      const { callState, agentCall } = await claimedState(state, call.params.abortSignal);
      return callState.track(wrapStream(callState, agentCall, redact, call));
    },
  };
}
