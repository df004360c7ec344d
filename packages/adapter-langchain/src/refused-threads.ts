import {
  type Attempt,
  LedgerError,
  REFUSAL_SAVED_TYPE,
  type SessionRecorder,
  type UnresolvedAttemptError,
} from "@agent-ledger/core";

/** A thread's refusal: the first error, and the attempts of the tool calls refused with one. */
interface ThreadRefusal {
  error: LedgerError;
  attempts: Attempt[];
}

/**
 * The LangGraph threads in which the handler refused a tool call, with the refusal, until the
 * thread's invocation ends. A tool node that turns errors into ToolMessages (createAgent's
 * without ledgerMiddleware, LangGraph's ToolNode with its default `handleToolErrors`) would hand
 * the refusal's text to the model as the tool's answer, and the run would go on as if the call
 * had been decided: the thread's next model call outside a tool call is refused with the same
 * error instead.
 * (Within that invocation only: the refused call was met, so the replay no longer holds it as
 * not met; a later resume's model call, handed the saved refusal, is `refuseSavedRefusals`'s.)
 */
export class RefusedThreads {
  readonly #byThread = new Map<string, ThreadRefusal>();

  /** How many threads it keeps a refusal for (see `keptBy`). */
  get kept(): number {
    return this.#byThread.size;
  }

  /**
   * The handler refused a tool call of `threadId` with `error` (the first refusal counts; the
   * attempt of each `unresolved-attempt` is kept). An error that is no LedgerError is the tool's
   * own business, and a call outside a thread has no next model call to find.
   */
  refused(threadId: string | undefined, error: unknown): void {
    if (threadId === undefined || !LedgerError.isInstance(error)) return;
    let refusal = this.#byThread.get(threadId);
    if (!refusal) {
      refusal = { error, attempts: [] };
      this.#byThread.set(threadId, refusal);
    }
    const attempt = (error as Partial<UnresolvedAttemptError>).attempt;
    if (error.code === "unresolved-attempt" && attempt !== undefined)
      refusal.attempts.push(attempt);
  }

  /**
   * Throws the refusal of a tool call of `threadId`, if the handler refused one, once the calls
   * refused are noted in the ledger (`REFUSAL_SAVED_TYPE`, on the run of each, `recorderOf`):
   * their tool node finished, the model's node runs next, so LangGraph has saved the refusals as
   * the calls' ToolMessages, and no resume runs these calls again, even approved (a person
   * reading `agent-ledger inspect` is told so, rather than that approving makes them again).
   */
  async check(
    threadId: string | undefined,
    recorderOf: (attempt: Attempt) => Promise<SessionRecorder>,
  ): Promise<void> {
    const refusal = threadId === undefined ? undefined : this.#byThread.get(threadId);
    if (!refusal) return;
    for (const attempt of refusal.attempts.splice(0)) {
      try {
        const recorder = await recorderOf(attempt);
        await recorder.record({
          type: REFUSAL_SAVED_TYPE,
          attemptId: attempt.attemptId,
          stepId: attempt.stepId,
          payload: { toolCallId: attempt.toolCallId ?? null, threadId: threadId ?? null },
        });
      } catch {
        // The note is advice for the person deciding; the refusal is what keeps the model from
        // reading the saved refusal, and it is thrown whatever became of the note.
      }
    }
    throw refusal.error;
  }

  /** An invocation of the thread ended: its next one starts without the refusal. */
  forget(threadId: string | undefined): void {
    if (threadId !== undefined) this.#byThread.delete(threadId);
  }
}
