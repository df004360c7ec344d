import {
  type Attempt,
  type JsonObject,
  LedgerError,
  type SessionRecorder,
} from "@agent-ledger/core";
import { inThread, recordedThreadId } from "./langchain-metadata.js";
import { retryLive, supersedeInFlight } from "./model-retry.js";

/**
 * Records a model call's request. On a resumed run it is matched with the recorded calls by
 * request hash. With a checkpoint saver the agent restarts from its last checkpoint, not from
 * its input, so recorded calls before the first match are skipped (the checkpoint already
 * holds them).
 */
export async function beforeModelCall(
  recorder: SessionRecorder,
  request: JsonObject,
  metadata: JsonObject,
  causedByEventId: string | undefined,
): Promise<Attempt> {
  // One handler may serve several threads: a call is matched only with the calls recorded in
  // its thread (or without one), so a new thread's first call, asking what another thread's
  // first call asked, is a call of its own, not a retry of that one.
  const replayAccepts = inThread(recordedThreadId({ metadata }));
  let stepId: string | undefined;
  for (;;) {
    try {
      const attempt = await recorder.beforeModelCall({
        request,
        metadata,
        ...(stepId !== undefined ? { stepId } : {}),
        ...(causedByEventId !== undefined ? { causedByEventId } : {}),
        ...(replayAccepts !== undefined ? { replayAccepts } : {}),
      });
      // Recorded before the crash but not in the checkpoint: LangChain calls the model anyway,
      // so record that as a new attempt rather than pretending it was answered (past the
      // retries the recorded run made of it, to the end of that chain).
      if (attempt.replayed) return await retryLive(recorder, attempt, metadata);
      return attempt;
    } catch (error) {
      const replay = recorder.replay;
      if (!LedgerError.isInstance(error, "replay-divergence") || !replay) throw error;
      // The checkpoint covers the recorded calls before this one: skip to the next recorded
      // call with this request, or go live if there is none.
      const from = replay.modelAttempts.findIndex(
        (recorded) => recorded.attemptId === error.details.attemptId,
      );
      // (Another thread's call in flight is that thread's to supersede.)
      const skipped = (from === -1 ? [] : replay.modelAttempts.slice(from)).filter(
        (recorded) => replayAccepts?.(recorded) ?? true,
      );
      if (replay.skipModelsTo(String(error.details.requestHash), replayAccepts)) continue;
      // Live: a call in flight at the crash that this one replaces is closed, not left open.
      stepId = await supersedeInFlight(recorder, skipped);
    }
  }
}
