import type { CompactSession } from "../compact/externalize.js";
import { assertId, uuidv7 } from "../events/ids.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent, NewEvent, ToolEffect } from "../events/types.js";
import type { ReplayMatch } from "../replay/replay-cursor.js";
import { markPrevalidated } from "../store/validate.js";
import type { Attempt } from "./attempt.js";
import { commitCompacted } from "./commit-event.js";
import { callMetadata } from "./prepare-payload.js";
import type { RecorderState } from "./recorder-state.js";
import type { UnsureSettlement } from "./unsure-requests.js";

/** What `commitRequest` commits: one model or tool attempt. */
export interface RequestOptions {
  kind: "model" | "tool";
  stepId: string;
  retryOf?: string | undefined;
  request: JsonValue;
  requestHash: string;
  name?: string;
  toolCallId?: string | undefined;
  effect?: ToolEffect;
  causedByEventId?: string | undefined;
  metadata?: JsonObject | undefined;
}

/** A request's fields but its place (step and retry): what `before*` and `retry` gather first. */
export type RequestCommon = Omit<RequestOptions, "stepId" | "retryOf">;

/** What a request is committed as, besides its fields: a resume's match, a retry (see below). */
export interface RequestContext {
  /**
   * The recorded attempt a resume matched the call with: given back to the cursor should the
   * request not be written (ReplayCursor.giveBack), so the caller's retry of the call is
   * matched with it again, as its first try was.
   */
  match?: ReplayMatch | undefined;
  /**
   * The request event of the tool attempt this one retries: the retry is noted for child runs
   * (ChildRuns.noteRetry) once written, found stored by a read-back (adopted later) included.
   */
  retriedEventId?: string | undefined;
}

/**
 * Commits an attempt's `*.requested` event; resolves with the attempt once it is durable. A
 * request not written (`context.match` given back) leaves everything as if it was never asked.
 */
export async function commitRequest(
  state: RecorderState,
  options: RequestOptions,
  context?: RequestContext,
): Promise<Attempt> {
  const { event, attempt, compact } = preparedRequest(state, options);
  let requested: LedgerEvent;
  try {
    // Payload and metadata are the recorder's own validated copies: the store need not copy them.
    requested = await commitCompacted(state, event, compact);
  } catch (error) {
    state.unsureRequests.failed(event, attempt, error, settlement(state, context));
    throw error;
  }
  state.open.open(attempt.attemptId, options.kind);
  attempt.requestedEventId = requested.eventId;
  attempt.seq = requested.seq;
  if (context?.retriedEventId !== undefined)
    state.children.noteRetry(attempt, context.retriedEventId);
  return attempt;
}

/**
 * An attempt's `*.requested` event, ready to commit (prevalidated, its payload compacted by
 * `compact`), and the attempt `before*` hands out once it is (its `requestedEventId` and `seq`
 * still to be filled in).
 */
export function preparedRequest(
  state: RecorderState,
  options: RequestOptions,
): { event: NewEvent; attempt: Attempt; compact: CompactSession } {
  assertId(options.stepId, "$.stepId");
  if (options.causedByEventId !== undefined) assertId(options.causedByEventId, "$.causedByEventId");
  const metadata = callMetadata(options.metadata);
  const attemptId = uuidv7();
  const compact = state.compactor.begin();
  const payload: JsonObject =
    options.kind === "model"
      ? { request: compact.request(options.request), requestHash: options.requestHash }
      : toolRequestPayload(options, compact.value(options.request, { text: false }));
  const event: NewEvent = {
    type: options.kind === "model" ? "model.requested" : "tool.requested",
    stepId: options.stepId,
    attemptId,
    payload,
  };
  if (options.retryOf !== undefined) event.retryOf = options.retryOf;
  if (options.causedByEventId !== undefined) event.causedByEventId = options.causedByEventId;
  if (metadata !== undefined) event.metadata = metadata;
  // Built first: should the append's outcome be unknown, it is what a retry adopts.
  const attempt: Attempt = {
    kind: options.kind,
    sessionId: state.sessionId,
    runId: state.runId,
    stepId: options.stepId,
    attemptId,
    requestedEventId: "",
    seq: -1,
    request: options.request,
    requestHash: options.requestHash,
  };
  if (options.retryOf !== undefined) attempt.retryOf = options.retryOf;
  if (options.causedByEventId !== undefined) attempt.causedByEventId = options.causedByEventId;
  if (options.toolCallId !== undefined) attempt.toolCallId = options.toolCallId;
  if (options.name !== undefined) attempt.name = options.name;
  if (options.effect !== undefined) attempt.effect = options.effect;
  return { event: markPrevalidated(event), attempt, compact };
}

/** What a failed commit of a request made in `context` settles once its outcome is known. */
function settlement(state: RecorderState, context: RequestContext | undefined): UnsureSettlement {
  const match = context?.match;
  const retried = context?.retriedEventId;
  return {
    notWritten: match && (() => state.replay?.giveBack(match)),
    written:
      retried === undefined ? undefined : (stored) => state.children.noteRetry(stored, retried),
  };
}

/**
 * `{ ...common, stepId, retryOf }`, written out: on Node 20 a literal that adds properties after
 * a spread takes V8's slow path, measured at 1-2 µs for these nine fields on every tool call.
 */
export function atStep(common: RequestCommon, stepId: string, retryOf?: string): RequestOptions {
  return {
    kind: common.kind,
    stepId,
    retryOf,
    request: common.request,
    requestHash: common.requestHash,
    name: common.name,
    toolCallId: common.toolCallId,
    effect: common.effect,
    causedByEventId: common.causedByEventId,
    metadata: common.metadata,
  };
}

/**
 * A tool request's payload, keys in this order: `{ toolCallId?, name, args, effect, requestHash }`.
 * Written field by field: the literal with a conditional spread first took V8's slow path
 * (properties added after a spread), a few µs of every recorded tool call.
 */
function toolRequestPayload(options: RequestOptions, args: JsonValue): JsonObject {
  const payload: JsonObject = {};
  if (options.toolCallId !== undefined) payload.toolCallId = options.toolCallId;
  payload.name = options.name as string;
  payload.args = args;
  payload.effect = options.effect as unknown as JsonObject;
  payload.requestHash = options.requestHash;
  return payload;
}
