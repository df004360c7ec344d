import {
  type Attempt,
  attemptFromRecorded,
  type BeforeToolCallOptions,
  hashJson,
  type JsonObject,
  type JsonValue,
  type RecordedAttempt,
  type ReplayCursor,
  ReplayDivergenceError,
  type ReplayedOutcome,
  type SessionRecorder,
  UnresolvedAttemptError,
} from "@agent-ledger/core";
import { recordedThreadId } from "./langchain-metadata.js";
import { toolCallKey } from "./tool-call-key.js";

/**
 * The recorded tool calls of a resumed run, matched by thread as well as toolCallId. The
 * replay cursor matches a tool call by toolCallId alone, with the first recorded call of that
 * id it has not matched yet: with one handler serving several LangGraph threads whose models
 * give the same ids, it would answer one thread's call with another's (or find its arguments
 * different: `replay-divergence`). So before the cursor matches a call of thread T, the calls
 * of that id recorded in other threads are moved past and held here for their own thread; a
 * call of that thread is then answered from what is held (`answerHeld`), as the cursor would.
 * A call recorded without a thread (a ledger written before threads were recorded) is left to
 * the cursor, for any thread, as before.
 */
export class HeldToolCalls {
  readonly #held = new Map<string, RecordedAttempt[]>();

  /**
   * Moves `replay` past the recorded calls with `toolCallId` that another thread than
   * `threadId` made (held for their thread), and past those `skip` selects (calls of earlier
   * turns the checkpoint holds). One pass over the recorded tool calls.
   */
  setAside(
    replay: ReplayCursor,
    threadId: string,
    toolCallId: string,
    skip: (recorded: RecordedAttempt) => boolean,
  ): void {
    replay.skipTools((recorded) => {
      if (recorded.toolCallId !== toolCallId) return false;
      const recordedThread = recordedThreadId(recorded.requested);
      if (recordedThread === undefined || recordedThread === threadId) return skip(recorded);
      const key = toolCallKey(recordedThread, toolCallId);
      this.#held.set(key, [...(this.#held.get(key) ?? []), recorded]);
      return true;
    });
  }

  /**
   * The next recorded call of (`threadId`, `toolCallId`) held for this thread, past those of
   * earlier turns (resolved, asked for by another completion than `causedByEventId`), as the
   * cursor would be moved past them.
   */
  take(
    threadId: string,
    toolCallId: string,
    causedByEventId: string | undefined,
  ): RecordedAttempt | undefined {
    const held = this.#held.get(toolCallKey(threadId, toolCallId));
    while (held && held.length > 0) {
      const recorded = held.shift() as RecordedAttempt;
      const earlierTurn =
        causedByEventId !== undefined &&
        recorded.status !== "requested" &&
        recorded.requested.causedByEventId !== causedByEventId;
      if (!earlierTurn) return recorded;
    }
    return undefined;
  }
}

/** The outcome of a resolved recorded call, as the recorder hands it back on resume. */
function replayedOf(recorded: RecordedAttempt): ReplayedOutcome | undefined {
  const outcome = recorded.outcome;
  if (!outcome || recorded.status === "requested") return undefined;
  const payload = (outcome.payload ?? {}) as JsonObject;
  let replayed: ReplayedOutcome;
  if (recorded.status === "completed")
    replayed = { status: "completed", result: payload.result ?? null, eventId: outcome.eventId };
  else if (recorded.status === "failed") {
    replayed = {
      status: "failed",
      error: (payload.error ?? { name: "Error", message: "failed" }) as never,
      eventId: outcome.eventId,
    };
    if (payload.partial !== undefined) replayed.partial = payload.partial;
  } else
    replayed = {
      status: "abandoned",
      reason: String(payload.reason ?? "abandoned"),
      eventId: outcome.eventId,
    };
  if (outcome.metadata !== undefined) replayed.metadata = outcome.metadata;
  return replayed;
}

/**
 * A held recorded call met again, answered as `recorder.beforeToolCall` answers one the cursor
 * matched: resolved, with its outcome (`replayed`, nothing written); in flight at the crash, run
 * again as a new attempt of its step if declared idempotent (now or when recorded) or approved,
 * else `unresolved-attempt`. A different request is `replay-divergence`.
 */
export async function answerHeld(
  recorder: SessionRecorder,
  recorded: RecordedAttempt,
  options: BeforeToolCallOptions,
): Promise<Attempt> {
  const requestHash = hashJson({ name: options.name, args: (options.args ?? null) as JsonValue });
  if (recorded.requestHash !== requestHash || recorded.name !== options.name)
    throw new ReplayDivergenceError(
      `tool call ${options.toolCallId ?? options.name} differs from the one recorded at seq ${recorded.requested.seq}`,
      {
        seq: recorded.requested.seq,
        attemptId: recorded.attemptId,
        recordedHash: recorded.requestHash,
        requestHash,
        recordedName: recorded.name ?? null,
        name: options.name,
      },
    );
  const attempt = attemptFromRecorded(recorded);
  const replayed = replayedOf(recorded);
  if (replayed) return { ...attempt, replayed };
  if (!(options.effect?.idempotent || recorded.effect?.idempotent || recorded.approved))
    throw new UnresolvedAttemptError(
      `tool call ${options.name}${options.toolCallId ? ` (${options.toolCallId})` : ""} was in flight when the process died and is not declared idempotent: it may or may not have happened. Check its effect, then retry or abandon attempt ${attempt.attemptId}.`,
      {
        attemptId: attempt.attemptId,
        stepId: attempt.stepId,
        toolCallId: attempt.toolCallId ?? null,
        name: options.name,
        seq: attempt.seq,
      },
      attempt,
    );
  // The retry declares the effect the call declares now, as the cursor's retry does.
  const effect = options.effect ? { ...recorded.effect, ...options.effect } : recorded.effect;
  return recorder.retry(
    { ...attempt, ...(effect ? { effect: effect as Attempt["effect"] } : {}) },
    options.metadata ? { metadata: options.metadata } : {},
  );
}
