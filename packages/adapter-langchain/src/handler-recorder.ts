import { type Actor, type EventStore, SessionRecorder } from "@agent-ledger/core";

/** Options of `LedgerCallbackHandler`: an existing recorder, or a store and a session. */
export type LedgerCallbackHandlerOptions =
  | { recorder: SessionRecorder; recordChains?: boolean }
  | {
      store: EventStore;
      sessionId: string;
      /** Give the same runId in a resumed process: the handler then continues that run. */
      runId?: string;
      actor?: Actor;
      recordChains?: boolean;
    };

const DEFAULT_ACTOR: Actor = { type: "agent", id: "langchain", framework: "langchain" };

/**
 * The handler's recorder: the one it was given, or one on its store and session that continues
 * the run `runId` names if the store has it (`SessionRecorder.resume`), else a new run.
 */
export async function openRecorder(
  options: LedgerCallbackHandlerOptions,
): Promise<SessionRecorder> {
  if ("recorder" in options) return options.recorder;
  const actor = options.actor ?? DEFAULT_ACTOR;
  const address = { store: options.store, sessionId: options.sessionId, actor };
  if (options.runId !== undefined) {
    const head = await options.store.runHead({
      sessionId: options.sessionId,
      runId: options.runId,
    });
    if (head.exists) return SessionRecorder.resume({ ...address, runId: options.runId });
  }
  return new SessionRecorder({
    ...address,
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
  });
}
