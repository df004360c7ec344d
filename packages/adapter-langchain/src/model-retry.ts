import {
  type Attempt,
  attemptFromRecorded,
  type JsonObject,
  type RecordedAttempt,
  type SessionRecorder,
} from "@agent-ledger/core";

/**
 * Retries of model calls. LangChain's `withRetry` and createAgent's `modelRetryMiddleware` call
 * the model again after a failure, with the same request and under the same parent run (the
 * retry runnable, the model node): that call is a new attempt of the failed call's step
 * (`retryOf`, DESIGN §3), not a call of its own.
 */
export class ModelRetries {
  /** The parent run of each model call in progress, by LangChain runId. */
  readonly #calls = new Map<string, string | undefined>();
  /** The last failed call under each parent run, until the next call under it. */
  readonly #failed = new Map<string, Attempt>();

  /**
   * The failed attempt that this call, starting under `parentRunId`, retries: the last call
   * under the same parent failed, and this one makes the same request.
   */
  retried(
    recorder: SessionRecorder,
    parentRunId: string | undefined,
    request: JsonObject,
  ): Attempt | undefined {
    if (parentRunId === undefined) return undefined;
    const failed = this.#failed.get(parentRunId);
    if (!failed) return undefined;
    this.#failed.delete(parentRunId);
    // Hashing a long conversation costs a pass over it: only after a failure.
    return recorder.sameModelRequest(failed, request) ? failed : undefined;
  }

  /** A model call started (its attempt is recorded). */
  started(runId: string, parentRunId: string | undefined): void {
    this.#calls.set(runId, parentRunId);
  }

  /** A model call ended; a failed one may be retried next under its parent. */
  ended(runId: string, failedAttempt?: Attempt): void {
    const parentRunId = this.#calls.get(runId);
    this.#calls.delete(runId);
    if (parentRunId === undefined) return;
    if (failedAttempt) this.#failed.set(parentRunId, failedAttempt);
    else this.#failed.delete(parentRunId);
  }

  /** The parent run ended: no retry of its failed call can come any more. */
  parentEnded(runId: string): void {
    this.#failed.delete(runId);
  }
}

/**
 * A new attempt of `attempt`'s call, to record a call LangChain makes whatever the ledger holds
 * (the callback cannot answer it). `recorder.retry` answers from the ledger the retries a
 * crashed process already made of it: those are moved past, so the attempt returned is live.
 */
export async function retryLive(
  recorder: SessionRecorder,
  attempt: Attempt,
  metadata: JsonObject,
): Promise<Attempt> {
  let current = await recorder.retry(attempt, { metadata });
  while (current.replayed) current = await recorder.retry(current, { metadata });
  return current;
}

/**
 * The model calls in flight at a crash (requested, no outcome) that a resumed agent replaces
 * with a call of another request: the same turn asked again with a prompt that changed (a
 * system prompt with the time, a middleware's edit...). Model calls count as idempotent (DESIGN
 * §7): the lost call is not repeated as such, so it is abandoned, not left unresolved for a
 * person. Returns the step of the last one: the new call is that turn's next attempt.
 * (A retry, `retryOf`, would say it better, but core's retry repeats the recorded request.)
 */
export async function supersedeInFlight(
  recorder: SessionRecorder,
  skipped: readonly RecordedAttempt[],
): Promise<string | undefined> {
  let stepId: string | undefined;
  for (const recorded of skipped) {
    if (recorded.kind !== "model" || recorded.status !== "requested") continue;
    await recorder.abandon(
      attemptFromRecorded(recorded),
      "in flight when the process died; the resumed agent called the model again with another request",
    );
    stepId = recorded.stepId;
  }
  return stepId;
}
