import type { Attributes, Context, Link, Span, SpanOptions, Tracer } from "@opentelemetry/api";
import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import {
  completionOf,
  isEmbeddingsRequest,
  isObject,
  modelNameOf,
  responseIdOf,
  str,
  toolResultOf,
  usageOf,
} from "./extract.js";
import { hostedToolCallsOf } from "./hosted-tool-calls.js";
import { hostedToolSpan } from "./otel-hosted-spans.js";
import { derivedOtelId, LedgerIdGenerator, withNextIds } from "./otel-ids.js";
import { toolTypeOf } from "./otel-tool-type.js";
import { pausesOf, runStatus } from "./paused-runs.js";
import { resumingAttempt } from "./resumed-agent-runs.js";
import {
  type AttemptRecord,
  agentIdOf,
  agentVersionOf,
  attemptKey,
  causeOf,
  isUnresolved,
  lastEventAt,
  loadSessionModel,
  payloadOf,
  type RunRecord,
  type SessionModel,
} from "./session-model.js";

// `@opentelemetry/api` is an optional peer: only its types are imported, so loading
// `@agent-ledger/core` never loads it. Its enums are used by value below.
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;
// The api stores the active span under this global symbol (createContextKey uses Symbol.for,
// stable since 1.0 so duplicated api copies interoperate); parentage goes through it.
const SPAN_KEY = Symbol.for("OpenTelemetry Context Key SPAN");

class ParentContext implements Context {
  readonly #values: Map<symbol, unknown>;
  constructor(values: Map<symbol, unknown> = new Map()) {
    this.#values = values;
  }
  getValue(key: symbol): unknown {
    return this.#values.get(key);
  }
  setValue(key: symbol, value: unknown): Context {
    return new ParentContext(new Map(this.#values).set(key, value));
  }
  deleteValue(key: symbol): Context {
    const values = new Map(this.#values);
    values.delete(key);
    return new ParentContext(values);
  }
}

function under(span: Span | undefined): Context {
  const root = new ParentContext();
  return span ? root.setValue(SPAN_KEY, span) : root;
}

/** What `toOtelSpans` made. */
export interface OtelProjection {
  spanCount: number;
  /** Trace ids of the root runs' spans (one trace per root run). */
  traceIds: string[];
}

export interface ToOtelSpansOptions {
  /** Instrumentation scope name (default `@agent-ledger/core`). */
  scopeName?: string;
  /** Add `gen_ai.tool.call.arguments` / `.result` (opt-in in the conventions). Default false. */
  includeToolContent?: boolean;
  /**
   * The `LedgerIdGenerator` the tracer provider was given as its `idGenerator`: the spans then
   * take ids derived from the session, run and attempt ids (the same on every export) instead
   * of random ones.
   */
  ids?: LedgerIdGenerator;
}

const OTEL_OPTIONS: KnownKeys<ToOtelSpansOptions> = {
  scopeName: true,
  includeToolContent: true,
  ids: true,
};

/**
 * `error.type` and the status message of a recorded failure. The conventions prefer the error's
 * code when it has one (`E503`, `ECONNRESET`), and an HTTP failure's status code as a string
 * (`429`): the recorded `code` when it is a string, else its HTTP `status`, else its name (a
 * class name such as `APICallError` tells a rate limit from an outage no better than `Error`).
 * A numeric `code` is not used: a driver's or gRPC's number means nothing without its library.
 */
function errorOf(payload: JsonObject): { type: string; message: string } {
  const error = payload.error;
  if (isObject(error))
    return {
      type:
        str(error.code) ??
        (typeof error.status === "number" ? String(error.status) : undefined) ??
        (typeof error.name === "string" && error.name ? error.name : "Error"),
      message: typeof error.message === "string" ? error.message : "",
    };
  return { type: "Error", message: typeof error === "string" ? error : "" };
}

/**
 * Marks `span` failed with the recorded failure at `at`: `error.type`, an error status, and an
 * `exception` event (`exception.type`: the error's class name; `.message`), which trace tools
 * show as the span's error. Not `.stacktrace`: a stack holds the machine's local file paths (as
 * the ATIF export, the export leaves them out).
 */
function recordFailure(span: Span, payload: JsonObject, at: string): void {
  const error = errorOf(payload);
  span.setAttribute("error.type", error.type);
  span.setStatus({ code: STATUS_ERROR, message: error.message });
  const recorded = isObject(payload.error) ? payload.error : {};
  span.addEvent(
    "exception",
    { "exception.type": str(recorded.name) ?? error.type, "exception.message": error.message },
    new Date(at),
  );
}

/**
 * Whether a model call streamed: said by its request's metadata (`{ stream }`), or else by its
 * outcome's (LangChain's adapter learns it from the chunks, after the call started).
 */
function streamOf(attempt: AttemptRecord): boolean | undefined {
  for (const metadata of [attempt.requested.metadata, attempt.outcome?.metadata]) {
    const stream = isObject(metadata) ? metadata.stream : undefined;
    if (typeof stream === "boolean") return stream;
  }
  return undefined;
}

/** `gen_ai.request.*` settings, from the request (AI SDK), `modelSettings` (OpenAI Agents) or `params` (LangChain). */
function requestSettings(request: JsonValue): Attributes {
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
function providerNameOf(...values: (JsonValue | undefined)[]): string | undefined {
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

/**
 * A `TracerProvider` from `@opentelemetry/api` (`BasicTracerProvider`, the global provider...).
 * Declared by shape so that the types of `@agent-ledger/core` type-check without the optional
 * `@opentelemetry/api` installed (a project with `skipLibCheck: false` that never exports spans
 * would otherwise fail on a missing module).
 */
export interface OtelTracerProvider {
  getTracer(name: string, version?: string): object;
}

/** The link from a span to the span of what caused it, if that is known. */
function causedBy(cause: Span | undefined): Link[] {
  return cause
    ? [{ context: cause.spanContext(), attributes: { "agent_ledger.link.type": "caused_by" } }]
    : [];
}

/**
 * Re-creates a session as OpenTelemetry spans through the given provider (§7), with the
 * recorded times: `invoke_agent {agent}` per run (with the provider and model of its first model
 * call other than an embedding; a child run under the `execute_tool` span of the tool call that
 * ran it, else under its parent run's span), `chat {model}` per model attempt,
 * `execute_tool {name}` per tool call the provider ran inside a completed model call (a hosted
 * tool: no attempt; under that call's `chat` span, marked `agent_ledger.tool.executed_by =
 * "provider"`) and per tool attempt (under its run, linked to the chat span that asked for it; a call made inside a tool call hangs under that call's span; a child run is
 * linked to the span of the event that caused it; a run a tool call ran ends with that call when
 * its own end was recorded later; one a resume picked up again under a retry of that call hangs
under its parent run's span instead, and ends with the retry). Failed attempts and runs get an error status, `error.type` and
 * an `exception` event; unresolved ones an error status, `agent_ledger.attempt.unresolved = true`,
 * and end at the session's last event; one retried without outcome ends when its retry was
 * requested.
 */
export async function toOtelSpans(
  store: EventStore,
  sessionId: string,
  tracerProvider: OtelTracerProvider,
  options: ToOtelSpansOptions = {},
): Promise<OtelProjection> {
  if (typeof (tracerProvider as Partial<OtelTracerProvider> | null)?.getTracer !== "function")
    throw new InvalidArgumentError(
      "$.tracerProvider",
      "a tracer provider is needed (an OpenTelemetry TracerProvider, e.g. the SDK's)",
    );
  // `includeToolContents` exported spans without the content asked for, without a word.
  assertOptions(options, OTEL_OPTIONS, "toOtelSpans");
  if (options.ids !== undefined && !(options.ids instanceof LedgerIdGenerator))
    throw new InvalidArgumentError(
      "$.options.ids",
      "ids must be a LedgerIdGenerator, the one the tracer provider was given as its idGenerator",
    );
  const model = await loadSessionModel(store, sessionId);
  const tracer = tracerProvider.getTracer(
    options.scopeName ?? "@agent-ledger/core",
    "0.1.0",
  ) as Tracer;
  return emitSpans(model, tracer, options);
}

function emitSpans(
  model: SessionModel,
  tracer: Tracer,
  options: ToOtelSpansOptions,
): OtelProjection {
  const sessionEnd = new Date(lastEventAt(model.events));
  const pauses = pausesOf(model);
  const runSpans = new Map<string, Span>();
  const attemptSpans = new Map<string, Span>();
  const ends: { span: Span; at: Date }[] = [];
  const spanEnds = new Map<Span, Date>();
  const pushEnd = (span: Span, at: Date): void => {
    ends.push({ span, at });
    spanEnds.set(span, at);
  };
  const traceIds: string[] = [];
  /** The spans of the runs each tool attempt picked up again (see `resumingAttempt`), by attemptKey. */
  const resumedRuns = new Map<string, Span[]>();

  /**
   * Starts a span under `parent`, with the given ids when the caller passed a generator, and
   * checks that the provider took them from it.
   */
  const startSpan = (
    name: string,
    spanOptions: SpanOptions,
    parent: Span | undefined,
    ids: { traceId?: string; spanId: string },
  ): Span => {
    const generator = options.ids;
    if (generator === undefined) return tracer.startSpan(name, spanOptions, under(parent));
    const span = withNextIds(generator, ids, () =>
      tracer.startSpan(name, spanOptions, under(parent)),
    );
    if (span.spanContext().spanId !== ids.spanId)
      throw new InvalidArgumentError(
        "$.options.ids",
        "the tracer provider does not take its ids from options.ids: give that LedgerIdGenerator to the provider as its idGenerator",
      );
    return span;
  };

  const spanOfEvent = (eventId: string | undefined): Span | undefined => {
    if (eventId === undefined) return undefined;
    const event = model.byEventId.get(eventId);
    if (!event) return undefined;
    const attemptSpan = event.attemptId
      ? attemptSpans.get(attemptKey(event.runId, event.attemptId))
      : undefined;
    if (attemptSpan) return attemptSpan;
    return runSpans.get(event.runId);
  };

  const parentOf = (run: RunRecord): RunRecord | undefined =>
    run.parentRunId === undefined ? undefined : model.runs.get(run.parentRunId);

  /**
   * The span of `run`, made with those of its ancestors that have none yet (a run whose first
   * event was committed before its parent's), from the top down: a loop, not a call per
   * ancestor, so no depth of child runs overflows the stack. Runs whose parents name each
   * other in a circle (rows written by hand) hang under none from the one that closes it.
   */
  const runSpan = (run: RunRecord): Span => {
    const existing = runSpans.get(run.runId);
    if (existing) return existing;
    const waiting = [run];
    const seen = new Set(waiting);
    for (
      let parent = parentOf(run);
      parent !== undefined && !runSpans.has(parent.runId) && !seen.has(parent);
      parent = parentOf(parent)
    ) {
      waiting.push(parent);
      seen.add(parent);
    }
    let span: Span | undefined;
    for (let index = waiting.length - 1; index >= 0; index--)
      span = startRunSpan(waiting[index] as RunRecord);
    return span as Span;
  };

  /** Starts the span of `run`, whose parent run (if any) already has its span. */
  const startRunSpan = (run: RunRecord): Span => {
    const parentRun = parentOf(run);
    const parentRunSpan = parentRun ? runSpans.get(parentRun.runId) : undefined;
    // A run that a tool call of its parent run ran (a sub-agent, an agent used as a tool) runs
    // inside that call: its span hangs under the call's `execute_tool` span, as a model call a
    // tool makes does, and keeps the link. A child run caused otherwise hangs under its parent
    // run's span.
    const causeSpan = spanOfEvent(run.causedByEventId);
    const causeEvent =
      run.causedByEventId === undefined ? undefined : model.byEventId.get(run.causedByEventId);
    const insideTool =
      causeSpan !== undefined &&
      parentRunSpan !== undefined &&
      causeEvent?.type === "tool.requested" &&
      causeEvent.runId === run.parentRunId;
    // A run a resume picked up again (the call that ran it was made again, and the run went on
    // under the new attempt) lived through both attempts: under either's span it would overrun
    // it, so it hangs under its parent run's span, linked to the first (its cause) and the last.
    const resumedIn =
      insideTool && causeEvent?.attemptId !== undefined
        ? resumingAttempt(model, attemptKey(causeEvent.runId, causeEvent.attemptId), run)
        : undefined;
    const parent = insideTool && resumedIn === undefined ? causeSpan : parentRunSpan;
    const first = run.started ?? (run.events[0] as LedgerEvent);
    const agentName = first.actor?.id ?? "agent";
    const attributes: Attributes = {
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": agentName,
      "gen_ai.agent.id": agentIdOf(run.started) ?? agentName,
      "gen_ai.conversation.id": model.sessionId,
      "agent_ledger.session.id": model.sessionId,
      "agent_ledger.run.id": run.runId,
      "agent_ledger.run.status": runStatus(run, pauses.has(run.runId)),
    };
    const version = agentVersionOf(run.started);
    if (version) attributes["gen_ai.agent.version"] = version;
    if (first.actor?.type) attributes["agent_ledger.actor.type"] = first.actor.type;
    if (first.actor?.framework) attributes["agent_ledger.actor.framework"] = first.actor.framework;
    if (run.parentRunId) attributes["agent_ledger.parent_run.id"] = run.parentRunId;
    const links = causedBy(causeSpan);
    const span = startSpan(
      `invoke_agent ${agentName}`,
      { kind: SPAN_KIND_INTERNAL, startTime: new Date(first.recordedAt), attributes, links },
      parent,
      {
        spanId: derivedOtelId(16, ["run", model.sessionId, run.runId]),
        // One trace per root run: the spans under it carry its trace id.
        ...(parent ? {} : { traceId: derivedOtelId(32, ["trace", model.sessionId, run.runId]) }),
      },
    );
    runSpans.set(run.runId, span);
    if (!parent) traceIds.push(span.spanContext().traceId);
    const terminal = run.terminal;
    if (terminal?.type === "run.failed")
      recordFailure(span, payloadOf(terminal), terminal.recordedAt);
    const end = terminal ? new Date(terminal.recordedAt) : sessionEnd;
    if (resumedIn !== undefined) {
      const key = attemptKey(resumedIn.runId, resumedIn.attemptId);
      resumedRuns.set(key, [...(resumedRuns.get(key) ?? []), span]);
    }
    const toolEnd = !insideTool
      ? undefined
      : resumedIn !== undefined
        ? attemptEnd(model, resumedIn, parentRun as RunRecord)
        : causeSpan && spanEnds.get(causeSpan);
    pushEnd(span, toolEnd !== undefined && toolEnd < end ? endInsideTool(run, toolEnd) : end);
    return span;
  };

  /**
   * The `gen_ai.provider.name` (required on agent spans too) and `gen_ai.request.model` (the
   * agent's model) of a run's span, from its first model call (not an embedding) naming them.
   */
  const described = new Set<string>();
  const describeAgent = (
    run: RunRecord,
    provider: string | undefined,
    requestModel: string | undefined,
  ): void => {
    const span = runSpans.get(run.runId);
    if (!span) return;
    for (const [key, value] of [
      ["gen_ai.provider.name", provider],
      ["gen_ai.request.model", requestModel],
    ] as const) {
      const done = `${run.runId}\n${key}`;
      if (value === undefined || described.has(done)) continue;
      span.setAttribute(key, value);
      described.add(done);
    }
  };

  /**
   * A fork's copy of an attempt another run made (`copiedFrom`) is drawn (the copy has a state
   * of its own: a call in flight may be resolved in one run only), marked, and without the
   * token usage, which was spent once, in the run the call was made in.
   */
  const attemptSpan = (attempt: AttemptRecord, run: RunRecord): void => {
    const copied = attempt.copiedFrom !== undefined;
    const requested = attempt.requested;
    const payload = payloadOf(requested);
    const outcome = payloadOf(attempt.outcome);
    const attributes: Attributes = {
      "gen_ai.conversation.id": model.sessionId,
      "agent_ledger.run.id": run.runId,
      "agent_ledger.step.id": attempt.stepId,
      "agent_ledger.attempt.id": attempt.attemptId,
      "agent_ledger.attempt.status": isUnresolved(attempt) ? "unresolved" : attempt.status,
    };
    if (requested.retryOf) attributes["agent_ledger.attempt.retry_of"] = requested.retryOf;
    if (copied) attributes["agent_ledger.attempt.copied"] = true;
    // A call that a tool call makes (an LLM inside a tool, a tool another tool calls) runs
    // inside that call: its span hangs under the tool's. Any other cause (a tool's: the
    // completion that asked for it) is a link.
    const cause = causeOf(model, attempt);
    const causeSpan = spanOfEvent(cause);
    const causeEvent = cause === undefined ? undefined : model.byEventId.get(cause);
    const insideTool =
      causeSpan !== undefined &&
      causeEvent?.type === "tool.requested" &&
      causeEvent.runId === run.runId;
    const parent = insideTool ? causeSpan : runSpan(run);
    const links = [
      ...(insideTool ? [] : causedBy(causeSpan)),
      ...(resumedRuns.get(attemptKey(attempt.runId, attempt.attemptId)) ?? []).map(
        (resumed): Link => ({
          context: resumed.spanContext(),
          attributes: { "agent_ledger.link.type": "resumes" },
        }),
      ),
    ];
    let name: string;
    let kind: number;
    if (attempt.kind === "model") {
      const request = payload.request ?? null;
      const response = attempt.status === "completed" ? outcome.response : outcome.partial;
      // Else the name its adapter noted in the request's metadata (OpenAI Agents' requests
      // carry none), as inspect reads it.
      const requestModel = modelNameOf(request, attempt.requested.metadata);
      // A LangChain text LLM is asked with `prompts`, not chat messages.
      const operation = isEmbeddingsRequest(request)
        ? "embeddings"
        : isObject(request) && Array.isArray(request.prompts)
          ? "text_completion"
          : "chat";
      name = requestModel ? `${operation} ${requestModel}` : operation;
      kind = SPAN_KIND_CLIENT;
      attributes["gen_ai.operation.name"] = operation;
      if (requestModel) attributes["gen_ai.request.model"] = requestModel;
      Object.assign(attributes, requestSettings(request));
      const stream = streamOf(attempt);
      if (stream !== undefined) attributes["gen_ai.request.stream"] = stream;
      const provider = providerNameOf(request, response ?? null, requested.metadata);
      if (provider) attributes["gen_ai.provider.name"] = provider;
      if (operation !== "embeddings") describeAgent(run, provider, requestModel);
      if (response !== undefined) {
        const usage = copied ? {} : usageOf(response);
        if (usage.inputTokens !== undefined)
          attributes["gen_ai.usage.input_tokens"] = usage.inputTokens;
        if (usage.outputTokens !== undefined)
          attributes["gen_ai.usage.output_tokens"] = usage.outputTokens;
        if (usage.cachedTokens !== undefined)
          attributes["gen_ai.usage.cache_read.input_tokens"] = usage.cachedTokens;
        // Named in @opentelemetry/semantic-conventions' incubating attributes (1.45).
        if (usage.cacheCreationTokens !== undefined)
          attributes["gen_ai.usage.cache_creation.input_tokens"] = usage.cacheCreationTokens;
        const completion = completionOf(response);
        if (completion.finishReasons.length > 0)
          attributes["gen_ai.response.finish_reasons"] = completion.finishReasons;
        const responseModel = isObject(response) ? modelNameOf(response) : undefined;
        if (responseModel) attributes["gen_ai.response.model"] = responseModel;
        const responseId = responseIdOf(response);
        if (responseId) attributes["gen_ai.response.id"] = responseId;
      }
    } else {
      const toolName = typeof payload.name === "string" ? payload.name : "tool";
      name = `execute_tool ${toolName}`;
      kind = SPAN_KIND_INTERNAL;
      attributes["gen_ai.operation.name"] = "execute_tool";
      attributes["gen_ai.tool.name"] = toolName;
      attributes["gen_ai.tool.type"] = toolTypeOf(model, attempt);
      if (typeof payload.toolCallId === "string")
        attributes["gen_ai.tool.call.id"] = payload.toolCallId;
      if (isObject(payload.effect)) {
        if (typeof payload.effect.kind === "string")
          attributes["agent_ledger.tool.effect"] = payload.effect.kind;
        if (typeof payload.effect.idempotent === "boolean")
          attributes["agent_ledger.tool.idempotent"] = payload.effect.idempotent;
      }
      if (options.includeToolContent) {
        attributes["gen_ai.tool.call.arguments"] = JSON.stringify(payload.args ?? null);
        if (attempt.status === "completed")
          attributes["gen_ai.tool.call.result"] = JSON.stringify(
            toolResultOf(outcome.result) ?? null,
          );
      }
    }
    const span = startSpan(
      name,
      { kind, startTime: new Date(requested.recordedAt), attributes, links },
      parent,
      { spanId: derivedOtelId(16, ["attempt", model.sessionId, run.runId, attempt.attemptId]) },
    );
    attemptSpans.set(attemptKey(attempt.runId, attempt.attemptId), span);
    if (attempt.status === "failed" && attempt.outcome) {
      recordFailure(span, outcome, attempt.outcome.recordedAt);
    } else if (attempt.status === "abandoned") {
      span.setAttribute("error.type", "abandoned");
      span.setStatus({ code: STATUS_ERROR, message: `abandoned: ${String(outcome.reason ?? "")}` });
    } else if (isUnresolved(attempt)) {
      span.setAttribute("agent_ledger.attempt.unresolved", true);
      span.setAttribute("error.type", "unresolved");
      span.setStatus({
        code: STATUS_ERROR,
        message: "unresolved: requested, no outcome recorded (in flight or lost in a crash)",
      });
    } else if (attempt.status === "requested") {
      span.setAttribute("agent_ledger.attempt.retried_by", attempt.retriedBy ?? "");
      span.setAttribute("error.type", "retried");
      span.setStatus({ code: STATUS_ERROR, message: "no outcome recorded; retried" });
    }
    pushEnd(span, attemptEnd(model, attempt, run) ?? sessionEnd);
    if (attempt.kind === "model" && attempt.status === "completed" && attempt.outcome)
      hostedSpans(attempt, attempt.outcome, span, attributes);
  };

  /**
   * The `execute_tool` spans of the tool calls the provider ran inside a completed model call
   * (hosted tools: see `hostedToolSpan`), under its `chat` span. The response does not say
   * when each ran, only that it was inside the call: each spans the call.
   */
  const hostedSpans = (
    attempt: AttemptRecord,
    completed: LedgerEvent,
    chat: Span,
    chatAttributes: Attributes,
  ): void => {
    const base: Attributes = {};
    for (const key of [
      "gen_ai.conversation.id",
      "agent_ledger.run.id",
      "agent_ledger.step.id",
      "agent_ledger.attempt.copied",
    ])
      if (chatAttributes[key] !== undefined) base[key] = chatAttributes[key];
    const calls = hostedToolCallsOf(payloadOf(completed).response);
    calls.forEach((hosted, index) => {
      const made = hostedToolSpan(hosted, base, options.includeToolContent === true);
      const span = startSpan(
        made.name,
        {
          kind: SPAN_KIND_INTERNAL,
          startTime: new Date(attempt.requested.recordedAt),
          attributes: made.attributes,
        },
        chat,
        {
          spanId: derivedOtelId(16, [
            "hosted",
            model.sessionId,
            attempt.runId,
            attempt.attemptId,
            String(index),
          ]),
        },
      );
      if (made.failure) {
        span.setAttribute("error.type", made.failure.type);
        span.setStatus({ code: STATUS_ERROR, message: made.failure.message });
      }
      pushEnd(span, new Date(completed.recordedAt));
    });
  };

  // Commit order: a causing span always exists before the span that links to it.
  for (const event of model.events) {
    const run = model.runs.get(event.runId) as RunRecord;
    runSpan(run);
    if ((event.type === "model.requested" || event.type === "tool.requested") && event.attemptId) {
      const attempt = model.attempts.get(attemptKey(event.runId, event.attemptId));
      if (attempt) attemptSpan(attempt, run);
    }
  }
  // Children end before parents, so exporters see complete subtrees first.
  for (let index = ends.length - 1; index >= 0; index--) {
    const entry = ends[index] as { span: Span; at: Date };
    entry.span.end(entry.at);
  }
  return { spanCount: ends.length, traceIds };
}

/**
 * When the span of a run that a tool call ran (an agent used as a tool) ends, when the call
 * ended before the run's end was recorded: with the call, since the run's work was over when the
 * call answered (an adapter records the call's outcome first and closes the run after it, or
 * a crash in between leaves the run open). Else at the run's last event before its end, for a
 * run that went on recording after the call ended (a call that timed out while its agent ran on).
 */
function endInsideTool(run: RunRecord, toolEnd: Date): Date {
  for (let index = run.events.length - 1; index >= 0; index--) {
    const event = run.events[index] as LedgerEvent;
    if (event === run.terminal) continue;
    const at = new Date(event.recordedAt);
    return at > toolEnd ? at : toolEnd;
  }
  return toolEnd;
}

/**
 * When an attempt's span ends: at its outcome; for one its process never answered (in flight
 * at a crash, then retried by a resume or abandoned by a person), at that process's last sign
 * of life: the last event, of the call's run and of the runs a tool call ran inside it (a
 * sub-agent's calls), before the first thing written there after the crash (a person's
 * approval or abandon, or the first retry of any call left in flight then, not this call's
 * own: with calls in flight together, the resume retries them one after the other). Not the
 * resume's time, nor the person's: minutes later, and no latency of the call. Undefined for one
 * still without any: the session's end.
 */
function attemptEnd(model: SessionModel, attempt: AttemptRecord, run: RunRecord): Date | undefined {
  if (settlingEvent(model, attempt) === undefined)
    return attempt.outcome ? new Date(attempt.outcome.recordedAt) : undefined;
  const from = attempt.requested.commitCursor;
  const runs = [run, ...runsInside(run, attempt)];
  let after = Number.POSITIVE_INFINITY;
  for (const each of runs)
    for (const cursor of afterCrash(model, each))
      if (cursor > from && cursor < after) after = cursor;
  let last = attempt.requested;
  for (const each of runs) {
    const before = lastEventBefore(each.events, after);
    if (before !== undefined && before.commitCursor > last.commitCursor) last = before;
  }
  return new Date(last.recordedAt);
}

/** The runs a tool attempt ran (its sub-agents), and the runs under them. */
function runsInside(run: RunRecord, attempt: AttemptRecord): RunRecord[] {
  const found: RunRecord[] = [];
  const waiting = run.children.filter(
    (child) => child.causedByEventId === attempt.requested.eventId,
  );
  for (let next = waiting.pop(); next !== undefined; next = waiting.pop()) {
    found.push(next);
    waiting.push(...next.children);
  }
  return found;
}

/**
 * The commit cursors of what is written in `run` only after a crash: a retry of a call its
 * process never answered, a person's abandon of one, an approval to make one again.
 */
function afterCrash(model: SessionModel, run: RunRecord): number[] {
  const cursors: number[] = [];
  for (const other of run.attempts) {
    const cursor = settlingEvent(model, other)?.commitCursor;
    if (cursor !== undefined) cursors.push(cursor);
  }
  for (const event of run.events)
    if (event.type === "attempt.approved") cursors.push(event.commitCursor);
  return cursors;
}

/**
 * The event that settled an attempt its process never answered: its retry's request, or a
 * person's abandon (`resolve --abandon`, decided after the fact); undefined for any other (an
 * outcome of its own, an abandon by the agent itself at that moment, or none yet).
 */
function settlingEvent(model: SessionModel, attempt: AttemptRecord): LedgerEvent | undefined {
  if (attempt.status === "abandoned")
    return attempt.outcome?.actor?.type === "human" ? attempt.outcome : undefined;
  if (attempt.outcome || attempt.retriedBy === undefined) return undefined;
  return model.attempts.get(attemptKey(attempt.runId, attempt.retriedBy))?.requested;
}

/** The last of `events` (in commit order) committed before `cursor`. */
function lastEventBefore(events: readonly LedgerEvent[], cursor: number): LedgerEvent | undefined {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((events[middle] as LedgerEvent).commitCursor < cursor) low = middle + 1;
    else high = middle;
  }
  return events[low - 1];
}
