import type {
  Attempt,
  BeforeToolCallOptions,
  JsonValue,
  RecordedAttempt,
  ReplayedOutcome,
  SessionRecorder,
} from "@agent-ledger/core";
import { inThread } from "./langchain-metadata.js";
import { toolRequestHash } from "./tool-call-key.js";

// What LangGraph's isGraphInterrupt recognises: the names survive the ledger's error normalisation.
const INTERRUPTS = new Set(["GraphInterrupt", "NodeInterrupt"]);

/** True for an error a LangGraph `interrupt()` threw: the graph pauses, nothing failed. */
export function isInterrupt(error: unknown): boolean {
  return (
    error !== null &&
    typeof error === "object" &&
    INTERRUPTS.has(String((error as { name?: unknown }).name))
  );
}

/** A recorded invocation that paused at `interrupt()` rather than failing. */
export function isInterruptedOutcome(replayed: ReplayedOutcome | undefined): boolean {
  return replayed?.status === "failed" && isInterrupt(replayed.error);
}

/**
 * A recorded `tool.failed` whose error is the ledger's refusal of a call made inside the tool:
 * earlier versions recorded that as the tool's outcome. The tool did not fail (it was not let
 * go on), so that is no answer of the call: it runs again, as after an interrupt.
 */
export function isRefusedOutcome(error: unknown): boolean {
  return (
    error !== null &&
    typeof error === "object" &&
    (error as { name?: unknown }).name === "UnresolvedAttemptError"
  );
}

/** A recorded outcome that is no answer of the call: an interrupt, or a refusal inside it. */
function isNoAnswer(replayed: ReplayedOutcome | undefined): boolean {
  return (
    isInterruptedOutcome(replayed) ||
    (replayed?.status === "failed" && isRefusedOutcome(replayed.error))
  );
}

/** How a tool call is matched on resume, besides its request. */
export interface ToolCallMatch {
  /** Made inside another tool's call: matched by name and order, never skipped. */
  nested?: boolean;
  /**
   * For a nested call: accepts the recorded calls made inside the same outer call (an attempt
   * of its step, see `requestToolCall`); only those can be this call.
   */
  madeInside?: ((recorded: RecordedAttempt) => boolean) | undefined;
  /**
   * The LangGraph thread it runs in. One handler may serve several threads whose models give
   * the same tool-call ids ("call_1" in each): on resume a call is matched only with the calls
   * recorded in its thread (or recorded without one, before threads were recorded).
   */
  threadId?: string | undefined;
  /**
   * True when two model completions answer the same model step (see `ToolCauses.sameTurn`):
   * a recorded call asked for by an attempt of the same turn as this call's cause is this call,
   * not an earlier turn's.
   */
  sameTurn?: ((cause: string, other: string) => boolean) | undefined;
}

/** A tool call's attempt, as `beforeToolCall` records it or finds it in the ledger. */
export interface ToolAttempt {
  attempt: Attempt;
  /**
   * It is a new attempt of a recorded one that a person approved (`attempt.approved`): it runs
   * again by that decision, and so do the calls made inside it.
   */
  approved: boolean;
}

/**
 * `recorder.beforeToolCall`, past the recorded invocations of this call that ended at a
 * LangGraph `interrupt()` (or at a refusal inside it, as earlier versions recorded one): when
 * the graph resumes, LangGraph runs the tool again from its start, so those are not its answer. What came after them (a completion, a failure, an
 * attempt in flight at a crash) is; with nothing after them the call is live, in the same step.
 */
export async function beforeToolCall(
  recorder: SessionRecorder,
  options: BeforeToolCallOptions,
  call: ToolCallMatch = {},
): Promise<ToolAttempt> {
  const { causedByEventId, toolCallId, name } = options;
  // A graph resumed from its checkpoint re-runs only the calls of the step it stopped in. A
  // resolved attempt that another model completion asked for under the same toolCallId (or,
  // without one, the same name) is a call of an earlier turn the checkpoint already holds, not
  // this one: models that give empty ids, or the same id every turn, would otherwise be
  // answered with an earlier turn's result. (An unresolved one is kept: it still stops a resume.)
  // A call made inside another tool is caused by that tool's request, which is new when the
  // outer call runs again after a crash: its recorded calls are matched in order, not skipped,
  // among those recorded inside an attempt of the same outer call (`madeInside`).
  // A completion of the same model step is the same turn: the model was called again (a
  // sub-agent's, run again with the tool it is inside, is called live: callbacks cannot answer
  // it from the ledger), and asked again for the call recorded under its earlier answer.
  const { threadId, madeInside, sameTurn } = call;
  const earlierTurn = (recorded: RecordedAttempt) => {
    const recordedCause = recorded.requested.causedByEventId;
    return (
      causedByEventId !== undefined &&
      recorded.status !== "requested" &&
      recordedCause !== causedByEventId &&
      !(recordedCause !== undefined && sameTurn?.(causedByEventId, recordedCause)) &&
      (toolCallId !== undefined ? recorded.toolCallId === toolCallId : recorded.name === name)
    );
  };
  const sameThread = inThread(threadId);
  // A call without an id is matched by name and order. LangGraph re-runs only the calls of a
  // turn whose writes it did not save, so a call of the same turn and name that already has its
  // answer, for other arguments, is another call (a sibling that finished before the crash), not
  // this one. (The hash is the recorder's over the call as given: a recorder whose redact
  // changes tool arguments makes every such answered call look like another one.)
  const requestHash =
    toolCallId === undefined && !call.nested
      ? toolRequestHash(name, (options.args ?? null) as JsonValue)
      : undefined;
  const sameCall =
    requestHash === undefined
      ? undefined
      : (recorded: RecordedAttempt) =>
          recorded.status === "requested" || recorded.requestHash === requestHash;
  const filters = [madeInside, sameThread, sameCall].filter(
    (filter): filter is (recorded: RecordedAttempt) => boolean => filter !== undefined,
  );
  const accepts =
    filters.length === 0
      ? undefined
      : (recorded: RecordedAttempt) => filters.every((filter) => filter(recorded));
  const replay = recorder.replay;
  if (replay && causedByEventId !== undefined && !call.nested)
    replay.skipTools((recorded) => earlierTurn(recorded) && (accepts?.(recorded) ?? true));
  // The recorded attempt the call is matched with: the one `replayAccepts` accepts last (the
  // cursor takes the first it accepts).
  let matched: RecordedAttempt | undefined;
  const replayAccepts = (recorded: RecordedAttempt) => {
    const accepted = accepts?.(recorded) ?? true;
    if (accepted) matched = recorded;
    return accepted;
  };
  const next = (stepId?: string): Promise<Attempt> => {
    matched = undefined;
    return recorder.beforeToolCall({
      ...options,
      ...(stepId !== undefined ? { stepId } : {}),
      ...(replay ? { replayAccepts } : {}),
    });
  };
  let attempt = await next();
  while (isNoAnswer(attempt.replayed)) attempt = await next(attempt.stepId);
  const approved = matched?.approved === true && attempt.retryOf === matched.attemptId;
  return { attempt, approved };
}
