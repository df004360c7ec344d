import type { Attributes, Link, Span, SpanOptions, Tracer } from "@opentelemetry/api";
import { InvalidArgumentError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import { isEmbeddingsRequest, isObject, toolResultOf } from "./extract.js";
import { type HostedCallAnswers, hostedCallAnswersOf } from "./hosted-call-answers.js";
import { completionOf } from "./model-completions.js";
import { modelNameOf, responseIdOf } from "./model-names.js";
import { usageOf } from "./model-usage.js";
import { SPAN_KIND_CLIENT, SPAN_KIND_INTERNAL, under } from "./otel-api-values.js";
import { markAttemptStatus, recordFailure } from "./otel-failures.js";
import { emitHostedSpans } from "./otel-hosted-spans.js";
import { derivedOtelId, withNextIds } from "./otel-ids.js";
import { withBytesOmitted } from "./otel-message-parts.js";
import { messageAttributes } from "./otel-messages.js";
import { providerNameOf, requestSettings, streamOf } from "./otel-model-attributes.js";
import { attemptEnd, endInsideTool } from "./otel-span-ends.js";
import { programCallerOf, toolTypeOf } from "./otel-tool-type.js";
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
  payloadOf,
  type RunRecord,
  type SessionModel,
} from "./session-model.js";
import type { OtelProjection, ToOtelSpansOptions } from "./to-otel-spans.js";

/** The link from a span to the span of what caused it, if that is known. */
function causedBy(cause: Span | undefined): Link[] {
  return cause
    ? [{ context: cause.spanContext(), attributes: { "agent_ledger.link.type": "caused_by" } }]
    : [];
}

/**
 * Draws a loaded session as spans through `tracer`: a span per run, per attempt and per hosted
 * tool call, each ended (children first) once all are started. `toOtelSpans` checks its
 * arguments and loads the session first.
 */
export function emitSpans(
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
  /** The hosted calls of each run and their answers, read once per run, by run id. */
  const hostedAnswers = new Map<string, HostedCallAnswers>();
  const hostedAnswersOf = (run: RunRecord): HostedCallAnswers => {
    let answers = hostedAnswers.get(run.runId);
    if (answers === undefined) {
      answers = hostedCallAnswersOf(run);
      hostedAnswers.set(run.runId, answers);
    }
    return answers;
  };

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
      const completion = response !== undefined ? completionOf(response) : undefined;
      if (options.includeMessages && operation !== "embeddings")
        Object.assign(
          attributes,
          messageAttributes(
            attempt,
            request,
            attempt.status === "completed" ? completion : undefined,
          ),
        );
      if (response !== undefined && completion !== undefined) {
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
      const callerId = programCallerOf({ model, attempt, answersOf: hostedAnswersOf });
      if (callerId !== undefined) attributes["agent_ledger.tool.caller_id"] = callerId;
      if (typeof payload.toolCallId === "string")
        attributes["gen_ai.tool.call.id"] = payload.toolCallId;
      if (isObject(payload.effect)) {
        if (typeof payload.effect.kind === "string")
          attributes["agent_ledger.tool.effect"] = payload.effect.kind;
        if (typeof payload.effect.idempotent === "boolean")
          attributes["agent_ledger.tool.idempotent"] = payload.effect.idempotent;
      }
      // A file's bytes are named, never copied in (see `withBytesOmitted`).
      if (options.includeToolContent) {
        attributes["gen_ai.tool.call.arguments"] = JSON.stringify(
          withBytesOmitted(payload.args ?? null, requested.eventId),
        );
        if (attempt.status === "completed" && attempt.outcome !== undefined)
          attributes["gen_ai.tool.call.result"] = JSON.stringify(
            withBytesOmitted(toolResultOf(outcome.result) ?? null, attempt.outcome.eventId),
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
    markAttemptStatus({ span, attempt, outcome });
    pushEnd(span, attemptEnd(model, attempt, run) ?? sessionEnd);
    if (attempt.kind === "model" && attempt.status === "completed")
      emitHostedSpans({
        sessionId: model.sessionId,
        attempt,
        answers: hostedAnswersOf(run),
        chat: span,
        chatAttributes: attributes,
        includeToolContent: options.includeToolContent === true,
        startSpan,
        pushEnd,
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
