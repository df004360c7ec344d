import { LedgerError } from "@agent-ledger/core";

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
  readonly #byThread = new Map<string, LedgerError>();

  /** How many threads it keeps a refusal for (see `keptBy`). */
  get kept(): number {
    return this.#byThread.size;
  }

  /**
   * The handler refused a tool call of `threadId` with `error` (the first refusal counts). An
   * error that is no LedgerError is the tool's own business, and a call outside a thread has no
   * next model call to find.
   */
  refused(threadId: string | undefined, error: unknown): void {
    if (threadId === undefined || !LedgerError.isInstance(error)) return;
    if (!this.#byThread.has(threadId)) this.#byThread.set(threadId, error);
  }

  /** Throws the refusal of a tool call of `threadId`, if the handler refused one. */
  check(threadId: string | undefined): void {
    const refusal = threadId === undefined ? undefined : this.#byThread.get(threadId);
    if (refusal) throw refusal;
  }

  /** An invocation of the thread ended: its next one starts without the refusal. */
  forget(threadId: string | undefined): void {
    if (threadId !== undefined) this.#byThread.delete(threadId);
  }
}
