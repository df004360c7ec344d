import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { hashJson, sha256Hex } from "../events/canonical.js";
import { InvalidArgumentError } from "../events/errors.js";
import { assertId, uuidv7 } from "../events/ids.js";
import { type JsonObject, type JsonValue, toPlainJson } from "../events/json.js";
import type { ToolEffect } from "../events/types.js";
import type { RecordedAttempt, ReplayMatch } from "../replay/replay-cursor.js";
import { validateEffect } from "../store/validate.js";
import type { Attempt } from "./attempt.js";
import { atStep, commitRequest, type RequestCommon } from "./commit-request.js";
import { asArgument } from "./option-errors.js";
import { preparePayload } from "./prepare-payload.js";
import type { RecorderState } from "./recorder-state.js";
import { answerFromLedger, mayRunAgain, unresolvedToolCall } from "./replayed-calls.js";
import { inTurn } from "./turns.js";
import type { AdoptCriteria } from "./unsure-requests.js";

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
export const BEFORE_TOOL_CALL: KnownKeys<BeforeToolCallOptions> = {
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
    // Recorded as null, every such call would hash alike, and a resume would answer each with
    // the first recorded response. (A tool call's missing args, a tool's undefined result, are
    // null by design: a tool may take nothing and return nothing.)
    if (options.request === undefined)
      throw new InvalidArgumentError(
        "$.request",
        "beforeModelCall needs the request it sends the model (request: the messages and settings, as plain JSON): without one, every call is recorded alike and a resume would answer each with the first call's response. Nothing was written; pass { request } (null if the call truly has none).",
      );
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
    const asked = askedToolCall(state, options);
    if (state.queue.unsure || state.unsureRequests.orphans.length > 0) {
      const adopted = await adoptUnsure(state, adoptCriteria(options, asked));
      if (adopted !== undefined) return adopted;
    }
    const match = matchToolCall(state, options, asked);
    const common = toolRequest(state, options, asked, match);
    if (match) return replayTool(state, match, asked.effect, common);
    return commitRequest(state, atStep(common, options.stepId ?? uuidv7()));
  });
}

/** A tool call's request as it is recorded: its args (redacted), its hash and its effect. */
export interface AskedToolCall {
  args: JsonValue;
  requestHash: string;
  effect: ToolEffect;
}

/** `options`' call checked and prepared to be recorded (`beforeToolCall`, `declineToolCall`). */
export function askedToolCall(state: RecorderState, options: BeforeToolCallOptions): AskedToolCall {
  assertToolName(options.name);
  if (options.toolCallId !== undefined) assertId(options.toolCallId, "$.toolCallId");
  assertReplayAccepts(options.replayAccepts);
  const args = preparePayload(state.redact, "tool.requested", options.args, "$", "args");
  const requestHash = hashJson({ name: options.name, args });
  return { args, requestHash, effect: toolEffect(options.effect) };
}

/** What a request a failed `before*` left stored must match to be this call's (`adoptUnsure`). */
export function adoptCriteria(options: BeforeToolCallOptions, asked: AskedToolCall): AdoptCriteria {
  return {
    kind: "tool",
    requestHash: asked.requestHash,
    name: options.name,
    toolCallId: options.toolCallId,
    stepId: options.stepId,
    causedByEventId: options.causedByEventId,
  };
}

/** On resume, the recorded attempt this call is (ReplayCursor.takeTool), taken; else undefined. */
export function matchToolCall(
  state: RecorderState,
  options: BeforeToolCallOptions,
  asked: AskedToolCall,
): ReplayMatch | undefined {
  return state.replay?.takeTool({
    toolCallId: options.toolCallId,
    name: options.name,
    requestHash: asked.requestHash,
    request: { name: options.name, args: asked.args },
    accepts: options.replayAccepts && acceptsOnly(options.replayAccepts),
    // The cause the recorder gives a call that names none: a repeat is told apart by it too.
    causedByEventId: options.causedByEventId ?? state.lastModelCompletion,
  });
}

/**
 * The request of this call but its place (step, retry): with the id and cause of the recorded
 * attempt it matched on resume, where the call names none; the cause defaults to the run's last
 * model completion.
 */
export function toolRequest(
  state: RecorderState,
  options: BeforeToolCallOptions,
  asked: AskedToolCall,
  match: ReplayMatch | undefined,
): RequestCommon & { name: string } {
  return {
    kind: "tool",
    request: asked.args,
    requestHash: asked.requestHash,
    name: options.name,
    effect: asked.effect,
    toolCallId: options.toolCallId ?? match?.attempt.toolCallId,
    causedByEventId:
      options.causedByEventId ??
      match?.attempt.requested.causedByEventId ??
      state.lastModelCompletion,
    metadata: options.metadata,
  };
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

/** A tool call's effect with the defaults filled in, checked as the store would check it. */
export function toolEffect(given: Partial<ToolEffect> | undefined): ToolEffect {
  const effect = toPlainJson({ ...DEFAULT_EFFECT, ...given }, "$.effect");
  asArgument(() => validateEffect({ effect }, "$"));
  return effect as unknown as ToolEffect;
}

/** A tool's name: a non-empty string that can be stored (it enters a prevalidated payload). */
export function assertToolName(name: unknown): asserts name is string {
  if (name === undefined) throw new InvalidArgumentError("$.name", "a tool call needs a name");
  if (typeof name !== "string" || name.length === 0)
    throw new InvalidArgumentError(
      "$.name",
      `a tool call's name must be a non-empty string, got ${name === "" ? "an empty string" : name === null ? "null" : typeof name}`,
    );
  toPlainJson(name, "$.name");
}
