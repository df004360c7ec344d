import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { hashJson, sha256Hex } from "../events/canonical.js";
import { InvalidArgumentError } from "../events/errors.js";
import { assertId, uuidv7 } from "../events/ids.js";
import { type JsonObject, type JsonValue, toPlainJson } from "../events/json.js";
import type { LedgerEvent, NewEvent, ToolEffect } from "../events/types.js";
import type { RecordedAttempt, ReplayMatch } from "../replay/replay-cursor.js";
import { markPrevalidated, validateEffect } from "../store/validate.js";
import type { Attempt } from "./attempt.js";
import { commitCompacted } from "./commit-event.js";
import { callMetadata, preparePayload } from "./prepare-payload.js";
import type { RecorderState } from "./recorder-state.js";
import { answerFromLedger, mayRunAgain, unresolvedToolCall } from "./replayed-calls.js";
import { inTurn } from "./turns.js";
import type { AdoptCriteria, UnsureSettlement } from "./unsure-requests.js";

export interface BeforeModelCallOptions {
  stepId?: string;
  /** The request as plain JSON (messages, tools, settings; never credentials). */
  request: unknown;
  /**
   * The event that caused this call, when it is not a turn of the run's own loop: a tool that
   * calls a model itself names its `tool.requested` here. None by default.
   */
  causedByEventId?: string;
  metadata?: JsonObject;
  /**
   * On resume, only a recorded model attempt this accepts can be this call: the next one it
   * accepts, in order; those it passes over stay for later calls. For a framework that runs
   * several conversations on one run (LangGraph threads on one handler): it accepts the attempts
   * of the same conversation, so a new one's first call is not taken for a retry of another's.
   */
  replayAccepts?: (recorded: RecordedAttempt) => boolean;
}

export interface BeforeToolCallOptions {
  stepId?: string;
  toolCallId?: string;
  name: string;
  args: unknown;
  effect?: Partial<ToolEffect>;
  /**
   * Defaults to the last model completion of this run (the call that asked for the tool), none
   * before the first. Given or defaulted (or none), it also tells on resume a repeat of a call
   * already matched with a recorded attempt (same toolCallId, same cause): answered (or
   * refused) as that one was (ReplayCursor.takeTool).
   */
  causedByEventId?: string;
  metadata?: JsonObject;
  /**
   * On resume, only a recorded tool attempt this accepts can be this call (by `toolCallId`, else
   * by name and order); those it passes over stay for later calls. For a framework whose
   * tool-call ids are unique only within a part of the run (a LangGraph thread, say): it
   * accepts the attempts recorded in the same part (read from their `requested` event).
   */
  replayAccepts?: (recorded: RecordedAttempt) => boolean;
}

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

export const DEFAULT_EFFECT: ToolEffect = { kind: "unknown", idempotent: false };

// A key a call does not take is refused: `toolCallID` for `toolCallId` left the call without
// the id a resume matches it by, `efect` for `effect` recorded a write as of unknown effect.
const BEFORE_MODEL_CALL: KnownKeys<BeforeModelCallOptions> = {
  stepId: true,
  request: true,
  causedByEventId: true,
  metadata: true,
  replayAccepts: true,
};
const BEFORE_TOOL_CALL: KnownKeys<BeforeToolCallOptions> = {
  stepId: true,
  toolCallId: true,
  name: true,
  args: true,
  effect: true,
  causedByEventId: true,
  metadata: true,
  replayAccepts: true,
};

/** `SessionRecorder.beforeModelCall`. */
export async function requestModelCall(
  state: RecorderState,
  options: BeforeModelCallOptions,
): Promise<Attempt> {
  return inTurn(state, async () => {
    assertOptions(options, BEFORE_MODEL_CALL, "beforeModelCall", {
      at: "$",
      needs: "beforeModelCall needs { request }",
    });
    assertReplayAccepts(options.replayAccepts);
    const request = preparePayload(
      state.redact,
      "model.requested",
      options.request,
      "$",
      "request",
    );
    const requestHash = modelRequestHash(state, request);
    if (state.queue.unsure || state.unsureRequests.orphans.length > 0) {
      const adopted = await adoptUnsure(state, {
        kind: "model",
        requestHash,
        stepId: options.stepId,
        causedByEventId: options.causedByEventId,
      });
      if (adopted !== undefined) return adopted;
    }
    const accepts = options.replayAccepts && acceptsOnly(options.replayAccepts);
    const match = state.replay?.takeModel(requestHash, request, accepts);
    if (match) {
      const replayed = answerFromLedger(match);
      if (replayed) {
        // The turn being re-executed: the cause its tool calls default to, as it was live.
        if (replayed.replayed?.status === "completed")
          state.lastModelCompletion = replayed.replayed.eventId;
        return replayed;
      }
      // In flight at the crash: model calls count as idempotent, so run it again.
      return commitRequest(
        state,
        {
          kind: "model",
          stepId: match.attempt.stepId,
          retryOf: match.attempt.attemptId,
          request,
          requestHash,
          causedByEventId: options.causedByEventId ?? match.attempt.requested.causedByEventId,
          metadata: options.metadata,
        },
        { match },
      );
    }
    return commitRequest(state, {
      kind: "model",
      stepId: options.stepId ?? uuidv7(),
      request,
      requestHash,
      causedByEventId: options.causedByEventId,
      metadata: options.metadata,
    });
  });
}

/** `SessionRecorder.sameModelRequest`. */
export function sameModelRequest(
  state: RecorderState,
  attempt: Attempt,
  request: unknown,
): boolean {
  if (attempt.kind !== "model") return false;
  const recorded = preparePayload(state.redact, "model.requested", request, "$", "request");
  return modelRequestHash(state, recorded) === attempt.requestHash;
}

/** = hashJson(request), with the JSON of message texts seen on earlier turns memoized. */
function modelRequestHash(state: RecorderState, request: JsonValue): string {
  return sha256Hex(state.canonical.json(request));
}

/** `invalid-argument` at `$.replayAccepts` unless it is undefined or a function. */
function assertReplayAccepts(accepts: unknown): void {
  if (accepts !== undefined && typeof accepts !== "function")
    throw new InvalidArgumentError("$.replayAccepts", "replayAccepts must be a function");
}

/**
 * `replayAccepts` held to its answer: true or false. A promise (an async predicate) would be
 * truthy, and accept every recorded attempt.
 */
function acceptsOnly(
  accepts: (recorded: RecordedAttempt) => boolean,
): (recorded: RecordedAttempt) => boolean {
  return (recorded) => {
    const accepted: unknown = accepts(recorded);
    if (typeof accepted !== "boolean")
      throw new InvalidArgumentError(
        "$.replayAccepts",
        "must return true or false, synchronously (an async function returns a promise)",
      );
    return accepted;
  };
}

/** `SessionRecorder.beforeToolCall`. */
export async function requestToolCall(
  state: RecorderState,
  options: BeforeToolCallOptions,
): Promise<Attempt> {
  return inTurn(state, async () => {
    assertOptions(options, BEFORE_TOOL_CALL, "beforeToolCall", {
      at: "$",
      needs: "beforeToolCall needs { name, args }",
    });
    assertToolName(options.name);
    if (options.toolCallId !== undefined) assertId(options.toolCallId, "$.toolCallId");
    assertReplayAccepts(options.replayAccepts);
    const args = preparePayload(state.redact, "tool.requested", options.args, "$", "args");
    const requestHash = hashJson({ name: options.name, args });
    const effect = toolEffect(options.effect);
    if (state.queue.unsure || state.unsureRequests.orphans.length > 0) {
      const adopted = await adoptUnsure(state, {
        kind: "tool",
        requestHash,
        name: options.name,
        toolCallId: options.toolCallId,
        stepId: options.stepId,
        causedByEventId: options.causedByEventId,
      });
      if (adopted !== undefined) return adopted;
    }
    const match = state.replay?.takeTool({
      toolCallId: options.toolCallId,
      name: options.name,
      requestHash,
      request: { name: options.name, args },
      accepts: options.replayAccepts && acceptsOnly(options.replayAccepts),
      // The cause the recorder gives a call that names none: a repeat is told apart by it too.
      causedByEventId: options.causedByEventId ?? state.lastModelCompletion,
    });
    const common = {
      kind: "tool" as const,
      request: args,
      requestHash,
      name: options.name,
      effect,
      toolCallId: options.toolCallId ?? match?.attempt.toolCallId,
      causedByEventId:
        options.causedByEventId ??
        match?.attempt.requested.causedByEventId ??
        state.lastModelCompletion,
      metadata: options.metadata,
    };
    if (match) return replayTool(state, match, effect, common);
    return commitRequest(state, atStep(common, options.stepId ?? uuidv7()));
  });
}

/**
 * A recorded tool attempt met again on resume: answered from the ledger; if it was in flight
 * at the crash, run again as a new attempt of its step only when declared idempotent (now or
 * when recorded) or approved; otherwise `unresolved-attempt`, carrying the attempt.
 */
export async function replayTool(
  state: RecorderState,
  match: ReplayMatch,
  effect: ToolEffect,
  common: RequestCommon & { name: string },
): Promise<Attempt> {
  const replayed = answerFromLedger(match);
  if (replayed) return replayed;
  if (!mayRunAgain(match.attempt, effect))
    throw unresolvedToolCall(match, common.name, common.toolCallId, state.store);
  return commitRequest(state, atStep(common, match.attempt.stepId, match.attempt.attemptId), {
    match,
    retriedEventId: match.attempt.requested.eventId,
  });
}

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
  let requested: LedgerEvent;
  try {
    // Payload and metadata are the recorder's own validated copies: the store need not copy them.
    requested = await commitCompacted(state, markPrevalidated(event), compact);
  } catch (error) {
    state.unsureRequests.failed(event, attempt, error, settlement(state, context));
    throw error;
  }
  state.open.open(attemptId, options.kind);
  attempt.requestedEventId = requested.eventId;
  attempt.seq = requested.seq;
  if (context?.retriedEventId !== undefined)
    state.children.noteRetry(attempt, context.retriedEventId);
  return attempt;
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
 * The request a rejected `before*` (or `retry`) left stored, if this call asks the same: then
 * this call is the caller's retry of it, and gets that attempt instead of a second request
 * (see `UnsureRequests`). Reads the run back first if the last append's outcome is unknown.
 */
export async function adoptUnsure(
  state: RecorderState,
  criteria: AdoptCriteria,
): Promise<Attempt | undefined> {
  if (state.queue.unsure) await state.queue.resolveUnknown();
  if (state.unsureRequests.orphans.length === 0) return undefined;
  const adopted = state.unsureRequests.adopt(criteria, (id) => state.open.isOpen(id));
  if (adopted !== undefined) state.open.adopted(adopted.attemptId);
  return adopted;
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

/** A tool call's effect with the defaults filled in, checked as the store would check it. */
export function toolEffect(given: Partial<ToolEffect> | undefined): ToolEffect {
  const effect = toPlainJson({ ...DEFAULT_EFFECT, ...given }, "$.effect");
  validateEffect({ effect }, "$");
  return effect as unknown as ToolEffect;
}

/** A tool's name: a non-empty string that can be stored (it enters a prevalidated payload). */
export function assertToolName(name: unknown): asserts name is string {
  if (typeof name !== "string" || name.length === 0)
    throw new InvalidArgumentError("$.name", "a tool call needs a name");
  toPlainJson(name, "$.name");
}
