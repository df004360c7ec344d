import type { Tracer } from "@opentelemetry/api";
import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import type { EventStore } from "../store/event-store.js";
import { LedgerIdGenerator } from "./otel-ids.js";
import { emitSpans } from "./otel-span-tree.js";
import { loadSessionModel } from "./session-model.js";

/** What `toOtelSpans` made. */
export interface OtelProjection {
  spanCount: number;
  /** Trace ids of the root runs' spans (one trace per root run). */
  traceIds: string[];
}

export interface ToOtelSpansOptions {
  /** Instrumentation scope name (default `@agent-ledger/core`). */
  scopeName?: string;
  /**
   * Add `gen_ai.tool.call.arguments` / `.result` (opt-in in the conventions): the JSON of the
   * call's arguments and of what the tool returned, as recorded. A file's bytes the ledger holds
   * (an image, audio or other file as base64 or a data URL, in a content part anywhere in the
   * value) are never copied in: that part becomes `{ type: "agent_ledger.blob_omitted",
   * modality, mime_type, size_bytes, event_id }`, as with `includeMessages`, `event_id` the
   * `tool.requested` (arguments) or `tool.completed` (result) event that holds them; all else,
   * text and files at a URL or named by id, is kept as it was (a bare base64 string outside a
   * content part too: the AI SDK adapter records a tool's raw `Uint8Array` so). Default false.
   */
  includeToolContent?: boolean;
  /**
   * Add the conversation to each `chat` (and `text_completion`) span, as the conventions'
   * opt-in attributes, each the JSON text of its schema: `gen_ai.input.messages` (the request's
   * messages, a system message among them kept there with role `system`),
   * `gen_ai.system_instructions` (instructions the request gives apart from its messages:
   * OpenAI Agents' `instructions`), `gen_ai.tool.definitions` (the tools it offered) and, for a
   * completed call, `gen_ai.output.messages` (its answer and `finish_reason`). Read from the
   * recorded payloads, as redacted when they were recorded: what redaction removed is not
   * there, and all else the conversation holds is. An image or file at a URL is a `uri` part,
   * one named by a provider's file id a `file` part; bytes the ledger holds are never copied in
   * (exporters cap an attribute's length, and JSON cut short parses no more): such a file is a
   * part `{ type: "agent_ledger.blob_omitted", modality, mime_type, size_bytes, event_id }`,
   * `event_id` the event that holds its bytes. Default false.
   */
  includeMessages?: boolean;
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
  includeMessages: true,
  ids: true,
};

/**
 * A `TracerProvider` from `@opentelemetry/api` (`BasicTracerProvider`, the global provider...).
 * Declared by shape so that the types of `@agent-ledger/core` type-check without the optional
 * `@opentelemetry/api` installed (a project with `skipLibCheck: false` that never exports spans
 * would otherwise fail on a missing module).
 */
export interface OtelTracerProvider {
  getTracer(name: string, version?: string): object;
}

/**
 * Re-creates a session as OpenTelemetry spans through the given provider (§7), with the
 * recorded times: `invoke_agent {agent}` per run (with the provider and model of its first model
 * call other than an embedding; a child run under the `execute_tool` span of the tool call that
 * ran it, else under its parent run's span), `chat {model}` per model attempt,
 * `execute_tool {name}` per tool call the provider ran inside a completed model call (a hosted
 * tool: no attempt; under that call's `chat` span, marked `agent_ledger.tool.executed_by =
 * "provider"`) and per tool attempt (under its run, linked to the chat span that asked for
 * it; a call made inside a tool call hangs under that call's span; a child run is linked to
 * the span of the event that caused it; a run a tool call ran ends with that call when its
 * own end was recorded later; one a resume picked up again under a retry of that call hangs
 * under its parent run's span instead, and ends with the retry). Failed attempts and runs get
 * an error status, `error.type` and an `exception` event; unresolved ones an error status,
 * `agent_ledger.attempt.unresolved = true`, and end at the session's last event; one retried
 * without outcome ends when its retry was requested.
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
