import {
  applyRedaction,
  DEFAULT_CREDENTIAL_PATHS,
  type JsonObject,
  LedgerError,
  type SessionRecorder,
  withoutCredentialKeys,
} from "@agent-ledger/core";
import type {
  Model,
  ModelProvider,
  ModelRequest,
  ModelResponse,
  ModelRetryAdviceRequest,
} from "@openai/agents";
import { noteCallCauses } from "./ledger-state.js";
import {
  beginModelCall,
  recordFailure,
  replayOutcome,
  resumedFailureAdvice,
} from "./model-call-retries.js";
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
