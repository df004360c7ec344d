import {
  type JsonObject,
  type JsonValue,
  LedgerError,
  type RecordedAttempt,
  type SessionRecorder,
  type ToolEffect,
} from "@agent-ledger/core";
import { FailedToolCalls } from "./failed-tool-calls.js";
import { type HeldCall, OtherRunCalls, type RunIdOrigin } from "./other-run-calls.js";
import { requestInsideDecision } from "./outer-decision.js";
import type { ToolRun } from "./run-tree.js";
import { ThreadSessions } from "./thread-sessions.js";
import { beforeToolCall, type ToolAttempt } from "./tool-attempt.js";
import { ToolCauses } from "./tool-causes.js";
import { ToolClaims } from "./tool-claim.js";

/** What a handler knows of the tool calls of its run, shared with its ledgerMiddleware. */
export class ToolCallBook {
  /** Which model completion asked for each tool call. */
  readonly causes = new ToolCauses();
  /** The calls ledgerMiddleware records itself. */
  readonly claims = new ToolClaims();
  /** The calls that other runs of the session hold (read once, when first needed). */
  readonly otherRuns: OtherRunCalls;
  /** The requests ledgerMiddleware saw throw, which a retry around it may make again. */
  readonly failures = new FailedToolCalls();
  /** The sessions that recorded each thread's calls (this handler's is named before its first). */
  readonly threads = new ThreadSessions();

  /**
   * `origin`: where the handler's run id came from, which a refusal's words follow; `root`: the
   * handler's run (the root of its subgraphs' child runs).
   */
  constructor(origin: RunIdOrigin, root: () => Promise<SessionRecorder>) {
    this.otherRuns = new OtherRunCalls(origin, root);
  }
}

/** A tool call about to run (or a retriever's query), as the handler or ledgerMiddleware sees it. */
export interface ToolCall {
  name: string;
  args: JsonValue;
  effect: ToolEffect;
  toolCallId: string | undefined;
  /** The LangGraph thread it runs in, if any. */
  threadId: string | undefined;
  /**
   * `datastore` for a retriever's query: noted in its request's metadata (`toolType`), the
   * OpenTelemetry export's `gen_ai.tool.type`. Undefined for a tool (a `function`).
   */
  toolType?: "datastore";
  /**
   * The tool call this one is made inside (a nested call): what it is caused by (its
   * `tool.requested`, when known) and matched within on resume (its step). Undefined for a call
   * a model asked for.
   */
  outer?: ToolRun | undefined;
}

/** A tool call with the metadata its `tool.requested` is recorded with. */
export interface ToolCallToRecord extends ToolCall {
  metadata: JsonObject;
  /**
   * The running tool call it is made inside, if any: also for a call a sub-agent's model asked
   * for (no `outer`), whose model, run again with that tool, may give it a new id on resume.
   */
  insideTool?: ToolRun | undefined;
}

/**
 * Records a tool call's request (`recorder.beforeToolCall` through `beforeToolCall`), caused by
 * the model completion that asked for it (or the call it is made inside), matched on resume by
 * thread and toolCallId. A call of a thread that no model completion of this run asked for
 * comes from a checkpoint another run may have recorded it under: refused (`invalid-argument`
 * at `$.runId`, or at `$.sessionId` for a run of another session that recorded the thread) if
 * one holds it, before anything is written. The handler's session is named among the thread's
 * (`ThreadSessions`) before the request is recorded. Inside a tool call a person approved to
 * run again (`insideTool`), a call the ledger holds runs again with it (`requestInsideDecision`).
 */
export function requestToolCall(
  recorder: SessionRecorder,
  book: ToolCallBook,
  call: ToolCallToRecord,
): Promise<ToolAttempt> {
  return requestInsideDecision(recorder, call.metadata, call.insideTool?.approved === true, () =>
    requestRecorded(recorder, book, call),
  );
}

async function requestRecorded(
  recorder: SessionRecorder,
  book: ToolCallBook,
  call: ToolCallToRecord,
): Promise<ToolAttempt> {
  const { name, args, effect, toolCallId, threadId, outer, metadata, insideTool } = call;
  const nested = outer !== undefined;
  const outerStepId = outer?.stepId;
  // Matched only with the calls recorded inside the same outer call: caused by the request of
  // an attempt of its step (run again after a crash, the outer call is a new attempt of the
  // same step). Matched by name and order across the run instead, the checkout of one thread
  // (or of a later turn) met the charge another's made. (An outer call whose step is unknown,
  // claimed by a middleware that does not give it: by name and order in the thread.)
  const replay = recorder.replay;
  const madeInside =
    nested && outerStepId !== undefined && replay && !replay.atFrontier
      ? (recorded: RecordedAttempt) => {
          const cause = recorded.requested.causedByEventId;
          return cause !== undefined && replay.toolStepOf(cause) === outerStepId;
        }
      : undefined;
  // A call another tool makes is caused by that tool's call, not by the model completion
  // that asked for the outer one: no model asked for it, so it is in no message history.
  const cause =
    outer?.requestedEventId ?? book.causes.causeOf(threadId, toolCallId, { name, args });
  const held = threadId !== undefined && !nested ? { threadId, toolCallId, name, args } : undefined;
  if (held && cause === undefined) await refuseHeldByOthers(recorder, book, held);
  if (threadId !== undefined) await book.threads.recording(recorder, threadId);
  // Asked for by a completion this run recorded before the crash, a call the ledger answers
  // (or finds with other arguments) may be a later turn of the thread, that another run
  // recorded with the same id (a new task on the old thread): this run's completion is then
  // an earlier turn's, and its answer is no answer of this call (see `refuseLaterTurn`).
  const recordedAt = held && cause !== undefined ? book.causes.recordedAt(cause) : undefined;
  const laterTurn = held && recordedAt !== undefined ? { held, recordedAt } : undefined;
  let requested: ToolAttempt;
  try {
    requested = await beforeToolCall(
      recorder,
      {
        name,
        args,
        effect,
        ...(toolCallId !== undefined ? { toolCallId } : {}),
        ...(cause !== undefined ? { causedByEventId: cause } : {}),
        metadata,
      },
      {
        nested,
        threadId,
        madeInside,
        sameTurn: (cause: string, other: string) => book.causes.sameTurn(cause, other),
        insideTool: insideTool !== undefined,
      },
    );
  } catch (error) {
    if (laterTurn && LedgerError.isInstance(error, "replay-divergence"))
      await refuseLaterTurn(recorder, book, laterTurn);
    throw error;
  }
  if (laterTurn && requested.attempt.replayed) await refuseLaterTurn(recorder, book, laterTurn);
  return requested;
}

/**
 * A call of a thread that no model completion of this run asked for (it comes from a
 * checkpoint: the thread is resumed, under a run that did not record its turn) must not run if
 * another open run holds it: of this session (a mistyped runId), or of another session that
 * recorded the thread (a mistyped sessionId, or one a setting left out gave its default).
 */
async function refuseHeldByOthers(
  recorder: SessionRecorder,
  book: ToolCallBook,
  held: HeldCall,
): Promise<void> {
  await book.otherRuns.refuseHeld(recorder, held);
  const others = await book.threads.others(recorder, held.threadId);
  await book.otherRuns.refuseHeldElsewhere(recorder, held, others);
}

/**
 * A thread resumed under the run that recorded an earlier turn of it, whose later turn another
 * run recorded (a new task on the old thread, then a crash, then a resume with the first run's
 * runId): the checkpoint holds the later turn, whose calls have the ids the earlier turn's had.
 * This run's causes say the earlier turn's completion asked for the call, and its recorded call
 * (an earlier turn's) would answer it. Refused (`$.runId`) when another open run requested the
 * same call (thread and id, or name and arguments) after that completion: that run holds it.
 * Checked only when the ledger would answer the call, or finds it with other arguments (a call
 * in flight at the crash stops the resume by itself): a resume of the right run reads the
 * session's tail after that completion, only in the window where a call completed before
 * LangGraph saved its write.
 */
async function refuseLaterTurn(
  recorder: SessionRecorder,
  book: ToolCallBook,
  laterTurn: { held: HeldCall; recordedAt: number },
): Promise<void> {
  await book.otherRuns.refuseHeld(recorder, laterTurn.held, laterTurn.recordedAt);
}
