import type { Attempt, SessionRecorder } from "@agent-ledger/core";
import { isInterrupt } from "./tool-attempt.js";
import { toolCallKey, toolRequestHash } from "./tool-call-key.js";
import type { ToolCall } from "./tool-request.js";

/** A tool call as the handler starts it: what decides whether it retries a failed one. */
export interface StartingToolCall
  extends Pick<ToolCall, "name" | "args" | "toolCallId" | "threadId"> {
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
 * Only the same call again (thread, toolCallId, the completion that asked for it, and request)
 * on the same recorder: a later invocation (`invoke(null)` after the graph stopped) reopens the
 * recorder and meets the failure as any resume does. A call that paused at `interrupt()` did
 * not fail, and a call without an id or made inside a tool is not tracked.
 */
export class NodeRetries {
  readonly #failed = new Map<
    string,
    { recorder: SessionRecorder; attempt: Attempt; cause: string | undefined; requestHash: string }
  >();

  /** The failed attempt `call` retries on `recorder`, if it retries one. Taken once. */
  retried(recorder: SessionRecorder, call: StartingToolCall): Attempt | undefined {
    if (call.toolCallId === undefined) return undefined;
    const key = toolCallKey(call.threadId, call.toolCallId);
    const failed = this.#failed.get(key);
    if (failed === undefined) return undefined;
    this.#failed.delete(key);
    const same =
      failed.recorder === recorder &&
      failed.cause === call.cause &&
      failed.requestHash === toolRequestHash(call.name, call.args);
    return same ? failed.attempt : undefined;
  }

  /** `attempt`, made for `call` on `recorder`, ended: with `error` when it threw. */
  ended(recorder: SessionRecorder, call: StartingToolCall, attempt: Attempt, error?: unknown) {
    if (call.toolCallId === undefined) return;
    const key = toolCallKey(call.threadId, call.toolCallId);
    if (error === undefined || isInterrupt(error)) {
      this.#failed.delete(key);
      return;
    }
    const requestHash = toolRequestHash(call.name, call.args);
    this.#failed.set(key, { recorder, attempt, cause: call.cause, requestHash });
  }
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
