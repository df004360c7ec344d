import {
  type Attempt,
  type JsonObject,
  type JsonValue,
  rebuiltError,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { ModelRetryAdvice, ModelRetryAdviceRequest } from "@openai/agents";
import { ledgerStep } from "./scope.js";

// How a model call the runner retries is recorded (a retry of its failed attempt), and how a
// resumed run's failures are thrown again and counted against the retries the runner allows.

// The last model call of each recorder: the runner's retry of a failed call (same request right
// after the failure; a failure that is not retried rejects the run) is recorded as a new attempt
// of the same step, with retryOf (§3). `failedBefore`: the failures of the call before this
// attempt that the runner in this process did not see (answered on resume by their retries).
const lastCalls = new WeakMap<
  SessionRecorder,
  { attempt: Attempt; failed: boolean; failedBefore: number }
>();

/**
 * True when `previous`, a failed call, is one the runner retries with a request asking the same:
 * a live failure, or a failure thrown again on replay that is the last model call the ledger
 * holds (the process died waiting to retry it). A replayed failure that recorded calls follow
 * is left to the replay: a ledger whose resume recorded the retry as a call of its own (before
 * this adapter linked it) answers it from there, instead of calling the model again.
 */
function retriedNow(recorder: SessionRecorder, previous: Attempt, request: JsonValue): boolean {
  const replayed = previous.replayed !== undefined;
  if (replayed && recorder.replay?.modelAttempts.at(-1)?.attemptId !== previous.attemptId)
    return false;
  // Hashing a long conversation costs a pass over it: only after a failed call.
  return recorder.sameModelRequest(previous, request);
}

/**
 * `beforeModelCall`, or `retry` for the runner's retry of a failed call, except on replay of a
 * failed call that the runner retried (`modelSettings.retry`; the next recorded call of the run
 * has the same request): that call is answered by its retry, and `failedBefore` counts the
 * failures so skipped. Rethrowing the recorded error would not do, because the rebuilt error
 * has lost part of what the retry policy looks at (the response's headers, the provider's
 * advice): the resumed run could fail where the original went on. The runner's retry of a
 * failure thrown again on replay is a retry too, recorded with `retryOf` (one step, as the run
 * would have recorded it had the process not died), and it keeps the count of failures unseen.
 */
export async function beginModelCall(
  recorder: SessionRecorder,
  options: { request: JsonValue; metadata: JsonObject },
): Promise<{ attempt: Attempt; failedBefore: number }> {
  const previous = lastCalls.get(recorder);
  if (previous?.failed && retriedNow(recorder, previous.attempt, options.request)) {
    const attempt = await recorder.retry(previous.attempt, { metadata: options.metadata });
    const { failedBefore } = previous;
    lastCalls.set(recorder, { attempt, failed: false, failedBefore });
    return { attempt, failedBefore };
  }
  let attempt = await recorder.beforeModelCall(options);
  let failedBefore = 0;
  while (attempt.replayed?.status === "failed" && recorder.replay?.retriesNext(attempt.attemptId)) {
    attempt = await recorder.retry(attempt, { metadata: options.metadata });
    failedBefore++;
  }
  // A failure thrown again is one the runner may retry, as it did live.
  const failed = attempt.replayed?.status === "failed";
  lastCalls.set(recorder, { attempt, failed, failedBefore });
  return { attempt, failedBefore };
}

export async function recordFailure(
  recorder: SessionRecorder,
  attempt: Attempt,
  error: unknown,
  partial?: JsonObject,
): Promise<void> {
  await ledgerStep(() => recorder.modelFailed(attempt, error, partial ? { partial } : {}));
  const last = lastCalls.get(recorder);
  if (last?.attempt !== attempt) return;
  last.failed = true;
  // A retry made on resume: the runner counts it from the failure it was shown, not the first.
  if (last.failedBefore > 0) noteUnseenFailures(error, last.failedBefore);
}

/**
 * The failures thrown on a resumed run, each with the number of recorded failures of its call
 * that the runner of this process did not see (`failedBefore`), for `getRetryAdvice`: a failure
 * thrown again on replay, and a live failure of a retry made on resume after such failures.
 */
const unseenFailures = new WeakMap<Error, number>();

function noteUnseenFailures(error: unknown, failedBefore: number): void {
  if (error instanceof Error) unseenFailures.set(error, failedBefore);
}

export function replayOutcome(attempt: Attempt, failedBefore: number): "live" | "completed" {
  const replayed = attempt.replayed;
  if (!replayed) return "live";
  if (replayed.status === "failed") {
    // Its status and code, as the runner's retry policy and the caller read them live.
    const error = rebuiltError(replayed.error);
    noteUnseenFailures(error, failedBefore);
    throw error;
  }
  return "completed"; // (an abandoned model call was refused in #begin)
}

/**
 * The runner's retry advice on a failure of a resumed run's call: no retry when the call has had
 * every attempt `maxRetries` allows, counting those of the processes before this one. The runner
 * counts attempts anew on resume (the failures of the call it retried are answered by their
 * retries, unseen), so a failure that was its last allowed attempt would be retried now, the
 * error keeping the status the policy retries on, and the resume would make a call the run it
 * continues never made; so would a live retry made on resume, after a second crash. Advice with
 * `replaySafety: "unsafe"` is a veto the runner applies before any policy. A failure that still
 * had a retry left is left to the policy, which reads the same status and code as live (the
 * process may have died waiting to retry it).
 */
export function resumedFailureAdvice(args: ModelRetryAdviceRequest): ModelRetryAdvice | undefined {
  if (!(args.error instanceof Error)) return undefined;
  const failedBefore = unseenFailures.get(args.error);
  if (failedBefore === undefined) return undefined;
  const maxRetries = args.request.modelSettings.retry?.maxRetries ?? 0;
  if (failedBefore + args.attempt <= maxRetries) return undefined;
  return {
    suggested: false,
    replaySafety: "unsafe",
    reason: `the call has made the ${maxRetries} retries modelSettings.retry allows, counting those recorded before the resume: not retried`,
  };
}
