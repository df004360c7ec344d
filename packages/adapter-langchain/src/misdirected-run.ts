import { LedgerError, readWholeRun, type SessionRecorder } from "@agent-ledger/core";
import type { HandlerRecorder } from "./handler-recorder.js";
import type { HandlerState } from "./handler-state.js";
import { hasCallIn, subgraphRunsWithCalls } from "./subgraph-calls.js";

// A handler built with a runId (or sessionId) that is not the one that recorded the thread it
// resumes starts a new run, and its first tool call is refused (`OtherRunCalls`: the run that
// holds the call is named). LangChain's callbacks record the invocation's chains in that run
// before any tool call shows whose thread it is, so the check cannot come before the run is
// written; left open, it would stay `running` for ever. So the refused new run, holding no call,
// is closed (cancelled) once the invocation ends, after the chains' failures are recorded, when
// the handler named it itself (no runId given: each retry would leave one more). A run named by
// the handler's runId stays open, as before: a handler built with that runId again (the same
// typo) resumes it and is refused the same way, where a closed run would only say `run-closed`.
// The refusal says which.

/** True for `OtherRunCalls`' refusal: the handler's runId or sessionId is the bad value. */
export function isMisdirectedRefusal(error: unknown): error is LedgerError {
  return (
    LedgerError.isInstance(error, "invalid-argument") &&
    (error.path === "$.runId" || error.path === "$.sessionId") &&
    typeof error.details.handlerRunId === "string"
  );
}

/** True when the handler's run `root` was started by this process and holds no call. */
export async function newRunWithoutCalls(root: SessionRecorder): Promise<boolean> {
  if (root.resumed || root.status !== "running") return false;
  const address = { sessionId: root.sessionId, runId: root.runId };
  if (hasCallIn(await readWholeRun(root.store, address), undefined)) return false;
  return (await subgraphRunsWithCalls(root.store, address, undefined)).length === 0;
}

/** What the refusal says of the handler's new run: closed (`closing`), or left open. */
export function newRunText(runId: string, closing: boolean): string {
  return closing
    ? `This handler's run ${runId} is new and holds no call: it is closed (cancelled) as this invocation ends, so that it does not stay open.`
    : `This handler's run ${runId} is new and holds no call; it is left open, so that a handler built with runId "${runId}" again is refused the same way: once the right run is resumed, close it with handler.cancelRun("started under a mistyped runId").`;
}

/** The reason the run is cancelled with. */
export function closedRunReason(refusal: LedgerError): string {
  return `refused (${refusal.path}): the thread is recorded in run ${String(refusal.details.runId)}; this run, new, holds no call`;
}

/**
 * What a handler does with the refusal of its run as not the thread's (a mistyped runId or
 * sessionId): if this process started the run, holding no call, under a runId the handler
 * chose, the run is closed once the invocation ends; the refusal says whether it is.
 */
export class MisdirectedRun {
  /** The refusal whose run is closed when the handler is idle. */
  #refusal: LedgerError | undefined;

  /** The handler's tool call was refused so (`isMisdirectedRefusal`): says what becomes of its run. */
  async refused(state: HandlerState, refusal: LedgerError): Promise<void> {
    const { options } = state;
    // A recorder given to the handler is its owner's run, not the handler's to close.
    if ("recorder" in options || refusal.details.newRun !== undefined) return;
    const root = await state.recorder.get();
    if (!(await newRunWithoutCalls(root).catch(() => false))) return;
    const closing = options.runId === undefined;
    if (closing) this.#refusal = refusal;
    refusal.message = `${refusal.message} ${newRunText(root.runId, closing)}`;
    refusal.details.newRun = closing ? "closed" : "left open";
  }

  /** The handler's last invocation in progress ended: the refused run is closed (`cancelRun`). */
  async invocationEnded(
    recorder: HandlerRecorder,
    cancelRun: (reason: string) => Promise<unknown>,
  ): Promise<void> {
    const refusal = this.#refusal;
    if (refusal === undefined) return;
    this.#refusal = undefined;
    // Best effort: the refusal, not a failure to close, is what the invocation ends with.
    if (await newRunWithoutCalls(await recorder.get()).catch(() => false))
      await cancelRun(closedRunReason(refusal)).catch(() => undefined);
  }
}
