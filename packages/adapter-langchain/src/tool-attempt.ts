import type {
  Attempt,
  BeforeToolCallOptions,
  JsonValue,
  RecordedAttempt,
  ReplayCursor,
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
  /**
   * Asked for by the model of a sub-agent that a running tool call runs (no nested call: it has
   * its own id and cause). Run again with that tool, the sub-agent's model is called live and
   * may give its calls new ids: one whose id no recorded call has is matched by name and order
   * among the calls an earlier answer of the same model step asked for (see `renamedCall`).
   */
  insideTool?: boolean;
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
  // Looked up by the id (or name) `earlierTurn` selects by: the cursor lives as long as the
  // resumed run, and a scan of its recorded calls for each call is quadratic in the run.
  if (replay && causedByEventId !== undefined && !call.nested)
    replay.skipTools(
      (recorded) => earlierTurn(recorded) && (accepts?.(recorded) ?? true),
      toolCallId !== undefined ? { toolCallId } : { name },
    );
  // The recorded attempt the call is matched with: the one `replayAccepts` accepts last (the
  // cursor takes the first it accepts).
  let matched: RecordedAttempt | undefined;
  const replayAccepts = (recorded: RecordedAttempt) => {
    const accepted = accepts?.(recorded) ?? true;
    if (accepted) matched = recorded;
    return accepted;
  };
  // A sub-agent's call under a new id its model gave when called again (see `renamedCall`).
  // Only inside a running tool: elsewhere a model is not asked a step again once its calls ran
  // (LangGraph re-runs a model node only when its answer was not saved, before its tools ran),
  // and a call without an id is matched by name and order already.
  const renamed =
    replay && call.insideTool && !call.nested && sameTurn && toolCallId !== undefined
      ? () =>
          renamedCall(replay, {
            ...options,
            toolCallId,
            accepts,
            sameTurn: (other) => causedByEventId !== undefined && sameTurn(causedByEventId, other),
          })
      : undefined;
  const next = (stepId?: string): Promise<Attempt> => {
    matched = undefined;
    const recorded = renamed?.();
    if (recorded) {
      // Matched with that recorded call alone: under its id (or, recorded without one, by name).
      const { toolCallId: _new, ...asked } = options;
      return recorder.beforeToolCall({
        ...asked,
        ...(recorded.toolCallId !== undefined ? { toolCallId: recorded.toolCallId } : {}),
        ...(stepId !== undefined ? { stepId } : {}),
        replayAccepts: (other) => other === recorded && replayAccepts(other),
      });
    }
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

/**
 * The recorded call that a sub-agent's call is, asked for under another id. The sub-agent, run
 * again with the tool it is inside, has its model called live (callbacks cannot answer it from
 * the ledger), and real providers give new ids in each answer (call_<random>): by id, the call
 * recorded under the earlier answer of that model step would never be met, and a call that
 * completed (or was abandoned) would run again. Among the recorded calls not matched yet that
 * `accepts` accepts, asked for by a completion of the same model step (`sameTurn`), by name
 * and order: the first with this request, else the first (whose other request is a divergence,
 * as it would be for a call matched by its id). Undefined (matched as usual) when a recorded
 * call not matched yet has this id, or none is of the same turn.
 */
function renamedCall(
  replay: ReplayCursor,
  call: {
    name: string;
    args?: unknown;
    toolCallId: string;
    causedByEventId?: string | undefined;
    accepts: ((recorded: RecordedAttempt) => boolean) | undefined;
    sameTurn: (other: string) => boolean;
  },
): RecordedAttempt | undefined {
  const { name, toolCallId, causedByEventId, accepts, sameTurn } = call;
  const accepted = (recorded: RecordedAttempt) => accepts?.(recorded) ?? true;
  // Looked up by id and by name (asked for every call inside a tool, for as long as the resumed
  // run goes on): a scan of all the run's recorded calls each time is quadratic in the run.
  if (replay.unmatchedTools({ toolCallId }).some(accepted)) return undefined;
  const sameStep = replay.unmatchedTools({ name }).filter((recorded) => {
    const cause = recorded.requested.causedByEventId;
    return (
      accepted(recorded) && cause !== undefined && cause !== causedByEventId && sameTurn(cause)
    );
  });
  const requestHash = toolRequestHash(name, (call.args ?? null) as JsonValue);
  return sameStep.find((recorded) => recorded.requestHash === requestHash) ?? sameStep[0];
}
