import { ConflictError, LedgerError, RunClosedError } from "../events/errors.js";
import type { RecorderState } from "./recorder-state.js";

/** What a writer that lost its run to another is to make of it, said once for both codes. */
const ANOTHER_PROCESS =
  "another process has this run (two workers resumed it at once, or a process taken for dead came back), so nothing was written and this recorder cannot go on: leave the run to that writer";

/**
 * The `conflict` or `run-closed` of a recorder that had read its run (a resumed one, or one
 * that has written to it) and lost it to another writer, told as such: "run r is at seq 19, the
 * writer expected 17" does not say that another process has the run, which is what a worker
 * that lost a race, or a zombie of a crashed process, must hear. Code, class and fields are the
 * store's. Undefined for any other error, and for a `run-closed` of a run this recorder closed
 * or found closed.
 */
export function runTakenElsewhere(
  state: RecorderState,
  error: unknown,
): ConflictError | RunClosedError | undefined {
  const { sessionId, runId } = state;
  if (LedgerError.isInstance(error, "conflict")) {
    const { expectedSeq, actualSeq } = error;
    if (!(expectedSeq > 0 && actualSeq !== expectedSeq)) return undefined;
    return new ConflictError({
      expectedSeq,
      actualSeq,
      sessionId,
      runId,
      message: `run ${runId} was written by another writer since this recorder read it (it is at seq ${actualSeq}, this recorder expected ${expectedSeq}): ${ANOTHER_PROCESS}. SessionRecorder.resume reads the run as it now is.`,
    });
  }
  if (!LedgerError.isInstance(error, "run-closed")) return undefined;
  if (state.status !== "running" || state.recordedEnd !== undefined) return undefined;
  const status = error.details?.status;
  if (typeof status !== "string") return undefined;
  return new RunClosedError({
    sessionId,
    runId,
    status,
    message: `another writer closed run ${runId} (it is ${status}) while this recorder had it open: ${ANOTHER_PROCESS}; a closed run accepts no more events.`,
  });
}
