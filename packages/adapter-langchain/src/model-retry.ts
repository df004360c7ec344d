import { type Attempt, hashJson, type JsonObject, type SessionRecorder } from "@agent-ledger/core";

/**
 * Retries of model calls. LangChain's `withRetry` and createAgent's `modelRetryMiddleware` call
 * the model again after a failure, with the same request and under the same parent run (the
 * retry runnable, the model node): that call is a new attempt of the failed call's step
 * (`retryOf`, DESIGN §3), not a call of its own.
 */
export class ModelRetries {
  /** The request of each model call in progress, by LangChain runId. */
  readonly #calls = new Map<string, { parentRunId: string | undefined; request: JsonObject }>();
  /** The last failed call under each parent run, until the next call under it. */
  readonly #failed = new Map<string, { attempt: Attempt; request: JsonObject }>();

  /**
   * The failed attempt that this call, starting under `parentRunId`, retries: the last call
   * under the same parent failed, and this one makes the same request.
   */
  retried(parentRunId: string | undefined, request: JsonObject): Attempt | undefined {
    if (parentRunId === undefined) return undefined;
    const failed = this.#failed.get(parentRunId);
    if (!failed) return undefined;
    this.#failed.delete(parentRunId);
    // Hashing a long conversation costs a pass over it: only after a failure.
    return hashJson(failed.request) === hashJson(request) ? failed.attempt : undefined;
  }

  /** A model call started (its attempt is recorded). */
  started(runId: string, parentRunId: string | undefined, request: JsonObject): void {
    this.#calls.set(runId, { parentRunId, request });
  }

  /** A model call ended; a failed one may be retried next under its parent. */
  ended(runId: string, failedAttempt?: Attempt): void {
    const call = this.#calls.get(runId);
    this.#calls.delete(runId);
    if (call?.parentRunId === undefined) return;
    if (failedAttempt)
      this.#failed.set(call.parentRunId, { attempt: failedAttempt, request: call.request });
    else this.#failed.delete(call.parentRunId);
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
