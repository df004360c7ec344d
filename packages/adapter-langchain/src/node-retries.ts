import type { Attempt, SessionRecorder } from "@agent-ledger/core";
import { isInterrupt } from "./tool-attempt.js";
import { toolCallKey, toolRequestHash } from "./tool-call-key.js";
import type { ToolCall } from "./tool-request.js";

/** A tool call as the handler starts it: what decides whether it retries a failed one. */
export interface StartingToolCall
  extends Pick<ToolCall, "name" | "args" | "effect" | "toolCallId" | "threadId"> {
  /** The model completion that asked for it, when known. */
  cause: string | undefined;
}

/**
 * Tool calls that a graph runs again after they threw, in the same invocation: LangGraph's
 * `retryPolicy` on a node runs the node's task again (a ToolNode its calls, with their ids), and
 * that run of a call is a retry of the failed attempt (its step, `retryOf`, DESIGN §3), not a
 * call of its own. A call of its own there left the step of the run a crash cut off apart from
 * the failed one, which a resume matched instead: the call in flight stayed unresolved for good.
 *
 * LangGraph runs the whole task again, so a ToolNode that runs a turn's calls in one task runs
 * the calls that completed again too: a non-idempotent one that completed is kept (`completed`),
 * and refused when it starts again, before it runs (it would take effect twice).
 *
 * Only the same call again (thread, toolCallId, the completion that asked for it, and request)
 * on the same recorder: a later invocation (`invoke(null)` after the graph stopped) reopens the
 * recorder and meets the failure or completion as any resume does. A completion is kept only
 * for a call whose completion is known (a model call the handler recorded): without it, a
 * later turn's call with the same id and arguments (fake models, some providers) cannot be told
 * from this one. A call that paused at `interrupt()` did not fail, and a call without an id or
 * made inside a tool is not tracked.
 */
export class NodeRetries {
  /** The last end of each tracked call, by thread and toolCallId: a failure, or a completion. */
  readonly #ended = new Map<
    string,
    {
      recorder: SessionRecorder;
      attempt: Attempt;
      cause: string | undefined;
      requestHash: string;
      failed: boolean;
      threadId: string | undefined;
    }
  >();

  /** How many calls' ends it keeps (see `keptBy`). */
  get kept(): number {
    return this.#ended.size;
  }

  /** The failed attempt `call` retries on `recorder`, if it retries one. Taken once. */
  retried(recorder: SessionRecorder, call: StartingToolCall): Attempt | undefined {
    const ended = this.#same(recorder, call);
    if (ended?.failed !== true) return undefined;
    this.#ended.delete(key(call));
    return ended.attempt;
  }

  /**
   * The completed attempt of `call` (not idempotent) on `recorder` that the graph now runs
   * again with its task, if any: the call must not run. Kept for each later run.
   */
  completed(recorder: SessionRecorder, call: StartingToolCall): Attempt | undefined {
    const ended = this.#same(recorder, call);
    return ended?.failed === false ? ended.attempt : undefined;
  }

  #same(recorder: SessionRecorder, call: StartingToolCall) {
    if (call.toolCallId === undefined) return undefined;
    const ended = this.#ended.get(key(call));
    if (ended === undefined) return undefined;
    const same =
      ended.recorder === recorder &&
      ended.cause === call.cause &&
      ended.requestHash === toolRequestHash(call.name, call.args);
    // Another call under the same id (another turn, or another recorder): it ends it.
    if (!same) this.#ended.delete(key(call));
    return same ? ended : undefined;
  }

  /**
   * An invocation in thread `threadId` ended: no retryPolicy runs its calls again (a later
   * invocation reopens the recorder, or runs calls of a later completion), so they are dropped.
   */
  forget(threadId: string | undefined): void {
    for (const [key, ended] of this.#ended)
      if (ended.threadId === threadId) this.#ended.delete(key);
  }

  /** `attempt`, made for `call` on `recorder`, ended: with `error` when it threw. */
  ended(recorder: SessionRecorder, call: StartingToolCall, attempt: Attempt, error?: unknown) {
    if (call.toolCallId === undefined) return;
    const failed = error !== undefined;
    const kept = failed ? !isInterrupt(error) : !call.effect.idempotent && call.cause !== undefined;
    if (!kept) {
      this.#ended.delete(key(call));
      return;
    }
    const requestHash = toolRequestHash(call.name, call.args);
    const { cause, threadId } = call;
    this.#ended.set(key(call), { recorder, attempt, cause, requestHash, failed, threadId });
  }
}

function key(call: StartingToolCall): string {
  return toolCallKey(call.threadId, call.toolCallId ?? "");
}

/**
 * True when the run being resumed holds a retry of `attempt` that no call has met yet: the
 * graph ran the failed call again before the crash (a node's retryPolicy), so that retry, not
 * the failure, is what the call comes to now.
 */
export function retriedBeforeCrash(recorder: SessionRecorder, attempt: Attempt): boolean {
  if (attempt.replayed?.status !== "failed") return false;
  return (
    recorder.replay?.unmatchedTools().some((recorded) => recorded.retryOf === attempt.attemptId) ??
    false
  );
}
