import {
  type Attempt,
  applyRedaction,
  DEFAULT_CREDENTIAL_PATHS,
  type JsonObject,
  type JsonValue,
  LedgerError,
  rebuiltError,
  type SessionRecorder,
  withoutCredentialKeys,
} from "@agent-ledger/core";
import type {
  Model,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelRetryAdvice,
  ModelRetryAdviceRequest,
} from "@openai/agents";
import { noteCallCauses } from "./ledger-state.js";
import {
  modelRequestToJson,
  modelResponseFromJson,
  modelResponseToJson,
  type StreamDoneEvent,
  streamDoneFromJson,
  streamDoneToJson,
  streamUsageWithFailedAttempts,
  usageWithFailedAttempts,
  withFailedAttempts,
} from "./model-json.js";
import { assertLedgerModelArguments, assertLedgerModelProviderArguments } from "./option-checks.js";
import { currentScope, ledgerStep, recorderOf } from "./scope.js";

type StreamEvent = Awaited<
  ReturnType<Model["getStreamedResponse"]> extends AsyncIterable<infer E> ? E : never
>;

export interface LedgerModelOptions {
  /**
   * Records every call on this run. Without it the run is taken from the current
   * runWithLedger / resumeRun scope (so a handoff target records on its child run); a call
   * outside any scope is refused (fail closed).
   */
  recorder?: SessionRecorder;
}

const wrappedModels = new WeakSet<object>();

/**
 * The request without credentials, before it is hashed and recorded: the keys of
 * `DEFAULT_CREDENTIAL_PATHS` anywhere in the request, as ever, and every key core's
 * `isCredentialKey` names (any case or spelling: `X-API-Key`, `x-goog-api-key`,
 * `Ocp-Apim-Subscription-Key`, `Proxy-Authorization`, `client_secret`...) at any depth of the
 * model settings (their `providerData`, its headers). Each value becomes `[redacted]`.
 * The second rule is kept to the settings, where credentials are given: the input and the
 * tools' schemas hold the conversation's and the app's own names (a `page_token` parameter).
 * A request with no such key is recorded, and hashed, exactly as before the rule, so a ledger
 * written before it still resumes.
 */
function withoutCredentials(request: JsonObject): JsonObject {
  const redacted = applyRedaction({ request }, DEFAULT_CREDENTIAL_PATHS, {
    type: "model.requested",
  }) as { request: JsonObject };
  const settings = redacted.request.modelSettings;
  if (settings === undefined) return redacted.request;
  const cleared = withoutCredentialKeys(settings);
  return cleared === settings ? redacted.request : { ...redacted.request, modelSettings: cleared };
}

function recordedRequest(request: ModelRequest): JsonObject {
  const json = modelRequestToJson(request);
  // `redact: false` on the run: credentials and all.
  return currentScope()?.run.redact === false ? json : withoutCredentials(json);
}

/** True for a model or provider already wrapped by this adapter. */
export function isLedgerWrapped(value: unknown): boolean {
  return typeof value === "object" && value !== null && wrappedModels.has(value);
}

async function resolveRecorder(options: LedgerModelOptions): Promise<SessionRecorder> {
  if (options.recorder) return options.recorder;
  const scope = currentScope();
  if (!scope)
    throw new LedgerError(
      "invalid-argument",
      "a ledger model was called outside runWithLedger/resumeRun and without { recorder }: refusing to call it unrecorded",
    );
  return recorderOf(scope);
}

// The last model call of each recorder: the runner's retry of a failed call (same request right
// after the failure; a failure that is not retried rejects the run) is recorded as a new attempt
// of the same step, with retryOf (§3). `failedBefore`: the failures of the call before this
// attempt that the runner in this process did not see (answered on resume by their retries).
const lastCalls = new WeakMap<
  SessionRecorder,
  { attempt: Attempt; failed: boolean; failedBefore: number }
>();

/**
 * True when `previous`, a failed call, is one the runner retries with a request asking the same:
 * a live failure, or a failure thrown again on replay that is the last model call the ledger
 * holds (the process died waiting to retry it). A replayed failure that recorded calls follow
 * is left to the replay: a ledger whose resume recorded the retry as a call of its own (before
 * this adapter linked it) answers it from there, instead of calling the model again.
 */
function retriedNow(recorder: SessionRecorder, previous: Attempt, request: JsonValue): boolean {
  const replayed = previous.replayed !== undefined;
  if (replayed && recorder.replay?.modelAttempts.at(-1)?.attemptId !== previous.attemptId)
    return false;
  // Hashing a long conversation costs a pass over it: only after a failed call.
  return recorder.sameModelRequest(previous, request);
}

/**
 * `beforeModelCall`, or `retry` for the runner's retry of a failed call, except on replay of a
 * failed call that the runner retried (`modelSettings.retry`; the next recorded call of the run
 * has the same request): that call is answered by its retry, and `failedBefore` counts the
 * failures so skipped. Rethrowing the recorded error would not do, because the rebuilt error
 * has lost part of what the retry policy looks at (the response's headers, the provider's
 * advice): the resumed run could fail where the original went on. The runner's retry of a
 * failure thrown again on replay is a retry too, recorded with `retryOf` (one step, as the run
 * would have recorded it had the process not died), and it keeps the count of failures unseen.
 */
async function beginModelCall(
  recorder: SessionRecorder,
  options: { request: JsonValue; metadata: JsonObject },
): Promise<{ attempt: Attempt; failedBefore: number }> {
  const previous = lastCalls.get(recorder);
  if (previous?.failed && retriedNow(recorder, previous.attempt, options.request)) {
    const attempt = await recorder.retry(previous.attempt, { metadata: options.metadata });
    const { failedBefore } = previous;
    lastCalls.set(recorder, { attempt, failed: false, failedBefore });
    return { attempt, failedBefore };
  }
  let attempt = await recorder.beforeModelCall(options);
  let failedBefore = 0;
  while (attempt.replayed?.status === "failed" && recorder.replay?.retriesNext(attempt.attemptId)) {
    attempt = await recorder.retry(attempt, { metadata: options.metadata });
    failedBefore++;
  }
  // A failure thrown again is one the runner may retry, as it did live.
  const failed = attempt.replayed?.status === "failed";
  lastCalls.set(recorder, { attempt, failed, failedBefore });
  return { attempt, failedBefore };
}

async function recordFailure(
  recorder: SessionRecorder,
  attempt: Attempt,
  error: unknown,
  partial?: JsonObject,
): Promise<void> {
  await ledgerStep(() => recorder.modelFailed(attempt, error, partial ? { partial } : {}));
  const last = lastCalls.get(recorder);
  if (last?.attempt !== attempt) return;
  last.failed = true;
  // A retry made on resume: the runner counts it from the failure it was shown, not the first.
  if (last.failedBefore > 0) noteUnseenFailures(error, last.failedBefore);
}

// The tool calls of a response are the calls of this completion from now on (see recordedCall).
function noteCompletion(
  output: unknown,
  completionEventId: string | undefined,
  replayed: boolean,
): void {
  const scope = currentScope();
  if (scope && Array.isArray(output) && completionEventId !== undefined)
    noteCallCauses(scope, output, { eventId: completionEventId, replayed });
}

/**
 * The failures thrown on a resumed run, each with the number of recorded failures of its call
 * that the runner of this process did not see (`failedBefore`), for `getRetryAdvice`: a failure
 * thrown again on replay, and a live failure of a retry made on resume after such failures.
 */
const unseenFailures = new WeakMap<Error, number>();

function noteUnseenFailures(error: unknown, failedBefore: number): void {
  if (error instanceof Error) unseenFailures.set(error, failedBefore);
}

function replayOutcome(attempt: Attempt, failedBefore: number): "live" | "completed" {
  const replayed = attempt.replayed;
  if (!replayed) return "live";
  if (replayed.status === "failed") {
    // Its status and code, as the runner's retry policy and the caller read them live.
    const error = rebuiltError(replayed.error);
    noteUnseenFailures(error, failedBefore);
    throw error;
  }
  return "completed"; // (an abandoned model call was refused in #begin)
}

/**
 * The runner's retry advice on a failure of a resumed run's call: no retry when the call has had
 * every attempt `maxRetries` allows, counting those of the processes before this one. The runner
 * counts attempts anew on resume (the failures of the call it retried are answered by their
 * retries, unseen), so a failure that was its last allowed attempt would be retried now, the
 * error keeping the status the policy retries on, and the resume would make a call the run it
 * continues never made; so would a live retry made on resume, after a second crash. Advice with
 * `replaySafety: "unsafe"` is a veto the runner applies before any policy. A failure that still
 * had a retry left is left to the policy, which reads the same status and code as live (the
 * process may have died waiting to retry it).
 */
function resumedFailureAdvice(args: ModelRetryAdviceRequest): ModelRetryAdvice | undefined {
  if (!(args.error instanceof Error)) return undefined;
  const failedBefore = unseenFailures.get(args.error);
  if (failedBefore === undefined) return undefined;
  const maxRetries = args.request.modelSettings.retry?.maxRetries ?? 0;
  if (failedBefore + args.attempt <= maxRetries) return undefined;
  return {
    suggested: false,
    replaySafety: "unsafe",
    reason: `the call has made the ${maxRetries} retries modelSettings.retry allows, counting those recorded before the resume: not retried`,
  };
}

// The model's name, for the on-call person reading the ledger: the name the agent asked the
// provider for, else the one the SDK's own models keep (`_model`). Kept in the event's metadata,
// not the request, so a request's hash (what replay compares) does not change.
function modelName(model: Model, requested: string | undefined): string | undefined {
  if (requested) return requested;
  const own = model as unknown as { _model?: unknown; model?: unknown };
  for (const value of [own._model, own.model])
    if (typeof value === "string" && value.length > 0) return value;
  return undefined;
}

/**
 * The provider the model calls, for OpenTelemetry's `gen_ai.provider.name`: a model's own
 * `provider` field, else, for the SDK's OpenAI models, their client's address (api.openai.com
 * is `openai`, an Azure OpenAI resource `azure.ai.openai`). Any other OpenAI-compatible server
 * is left unnamed rather than called OpenAI.
 */
function providerOf(model: Model): string | undefined {
  const own = model as unknown as { provider?: unknown; _client?: { baseURL?: unknown } };
  if (typeof own.provider === "string" && own.provider.length > 0) return own.provider;
  const baseURL = own._client?.baseURL;
  if (typeof baseURL !== "string" || !URL.canParse(baseURL)) return undefined;
  const host = new URL(baseURL).hostname;
  if (host === "api.openai.com") return "openai";
  if (host.endsWith(".openai.azure.com")) return "azure.ai.openai";
  return undefined;
}

class LedgerModel implements Model {
  readonly #model: Model;
  readonly #options: LedgerModelOptions;
  readonly #name: string | undefined;
  readonly #provider: string | undefined;

  constructor(model: Model, options: LedgerModelOptions, requestedName?: string) {
    this.#model = model;
    this.#options = options;
    this.#name = modelName(model, requestedName);
    this.#provider = providerOf(model);
  }

  // Providers may offer retry advice; keep it visible to the runner. A failure on a resumed run
  // is refused a retry past those `maxRetries` allows, counted over every process.
  getRetryAdvice(args: ModelRetryAdviceRequest) {
    return resumedFailureAdvice(args) ?? this.#model.getRetryAdvice?.(args);
  }

  async #begin(request: ModelRequest, stream: boolean) {
    // The run's signal aborted before the call: no call is made, and none is recorded.
    request.signal?.throwIfAborted();
    // The ledger refused a call since the last model call, in a place where the SDK made the
    // refusal output for the model and went on (a shell or editor): the run stops here instead.
    const scope = currentScope();
    if (scope?.refused !== undefined) throw scope.refused;
    const begun = await ledgerStep(async () => {
      const recorder = await resolveRecorder(this.#options);
      const { attempt, failedBefore } = await beginModelCall(recorder, {
        request: recordedRequest(request),
        metadata: {
          stream,
          ...(this.#name !== undefined ? { model: this.#name } : {}),
          ...(this.#provider !== undefined ? { provider: this.#provider } : {}),
        },
      });
      // Refused inside ledgerStep, so the run stays open for a person to look at.
      if (attempt.replayed?.status === "abandoned")
        throw new LedgerError(
          "replay-divergence",
          `model call ${attempt.attemptId} was abandoned: ${attempt.replayed.reason}`,
        );
      return { recorder, attempt, failedBefore };
    });
    // Aborted while the request was being committed: the call is not made, and fails so.
    if (request.signal?.aborted && begun.attempt.replayed === undefined) {
      const reason: unknown = request.signal.reason;
      await recordFailure(begun.recorder, begun.attempt, reason);
      throw reason;
    }
    return begun;
  }

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    const { recorder, attempt, failedBefore } = await this.#begin(request, false);
    if (replayOutcome(attempt, failedBefore) === "completed") {
      const replayed = attempt.replayed?.status === "completed" ? attempt.replayed : undefined;
      const response = modelResponseFromJson(withFailedAttempts(replayed?.result, failedBefore));
      noteCompletion(response.output, replayed?.eventId, true);
      return response;
    }
    let response: ModelResponse;
    try {
      response = await this.#model.getResponse(request);
    } catch (error) {
      await recordFailure(recorder, attempt, error);
      throw error;
    }
    const completed = await ledgerStep(() =>
      recorder.modelCompleted(attempt, modelResponseToJson(response)),
    );
    noteCompletion(response.output, completed.eventId, false);
    // A retry made on resume: the runner adds the failures it saw to the usage, not those
    // answered from the ledger before them (as a completion answered from the ledger counts).
    if (failedBefore === 0) return response;
    return { ...response, usage: usageWithFailedAttempts(response.usage, failedBefore) };
  }

  async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
    const { recorder, attempt, failedBefore } = await this.#begin(request, true);
    if (replayOutcome(attempt, failedBefore) === "completed") {
      const replayed = attempt.replayed?.status === "completed" ? attempt.replayed : undefined;
      const done = streamDoneFromJson(withFailedAttempts(replayed?.result, failedBefore));
      noteCompletion(done.response.output, replayed?.eventId, true);
      yield { type: "response_started" } as StreamEvent;
      yield done as unknown as StreamEvent;
      return;
    }
    let resolved = false;
    const partial: JsonObject[] = [];
    try {
      for await (const event of this.#model.getStreamedResponse(request)) {
        if ((event as { type?: string }).type === "response_done") {
          // Durable before the runner sees the completion.
          const done = event as unknown as StreamDoneEvent;
          const completed = await ledgerStep(() =>
            recorder.modelCompleted(attempt, streamDoneToJson(done)),
          );
          noteCompletion(done.response.output, completed.eventId, false);
          resolved = true;
          if (failedBefore > 0) {
            // As in getResponse: the failures answered from the ledger count in the usage.
            const usage = streamUsageWithFailedAttempts(done.response.usage, failedBefore);
            yield { ...done, response: { ...done.response, usage } } as unknown as StreamEvent;
            continue;
          }
        } else if ((event as { type?: string }).type === "output_text_delta") {
          partial.push({ delta: String((event as { delta?: unknown }).delta ?? "") });
        }
        yield event;
      }
    } catch (error) {
      if (!resolved) {
        resolved = true;
        await recordFailure(recorder, attempt, error, {
          text: partial.map((entry) => entry.delta).join(""),
        });
      }
      throw error;
    } finally {
      // The consumer stopped reading (or the stream ended without response_done).
      if (!resolved) {
        resolved = true;
        await recordFailure(recorder, attempt, new Error("the stream ended before response_done"), {
          text: partial.map((entry) => entry.delta).join(""),
        });
      }
    }
  }
}

/**
 * Wraps one `Model`: every getResponse / getStreamedResponse is recorded (`model.requested`
 * committed before the call, `model.completed` with output and usage, `model.failed` on error;
 * a stream completes at `response_done`). If the request cannot be committed the model is not
 * called. On a resumed run, recorded calls are answered from the ledger.
 */
export function ledgerModel(model: Model, options: LedgerModelOptions = {}): Model {
  assertLedgerModelArguments(model, options);
  return wrapModel(model, options, undefined);
}

/** A model the provider could not give: every live call fails with the provider's `error`. */
function unavailableModel(error: unknown): Model {
  return {
    async getResponse() {
      throw error;
    },
    // biome-ignore lint/correctness/useYield: it fails before its first event, as the provider did
    async *getStreamedResponse() {
      throw error;
    },
  };
}

function wrapModel(model: Model, options: LedgerModelOptions, name: string | undefined): Model {
  if (isLedgerWrapped(model)) return model;
  const wrapped = new LedgerModel(model, options, name);
  wrappedModels.add(wrapped);
  return wrapped;
}

/**
 * Wraps a ModelProvider: every model it returns (getModel runs every turn) is a ledgerModel.
 * On a resumed run, a provider that cannot give a model (no credentials in the new process, the
 * SDK's "Missing credentials") gives one that fails only when it is called live: the calls the
 * ledger holds are answered without it, so the resume reaches what the crash left (a call to
 * decide) instead of closing the run as failed before the first recorded answer.
 */
export function ledgerModelProvider(
  provider: ModelProvider,
  options: LedgerModelOptions = {},
): ModelProvider {
  assertLedgerModelProviderArguments(provider, options);
  if (isLedgerWrapped(provider)) return provider;
  const wrapped: ModelProvider = {
    async getModel(modelName?: string) {
      let model: Model;
      try {
        model = await provider.getModel(modelName);
      } catch (error) {
        if (currentScope()?.root.resumed !== true) throw error;
        model = unavailableModel(error);
      }
      return wrapModel(model, options, modelName);
    },
  };
  wrappedModels.add(wrapped);
  return wrapped;
}
