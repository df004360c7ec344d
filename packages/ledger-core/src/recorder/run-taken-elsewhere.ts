import { ConflictError, LedgerError, RunClosedError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import { closedBeforeResume } from "./closed-run-records.js";
import type { RecorderState } from "./recorder-state.js";

/** What a writer that lost its run to another is to make of it, said once for both codes. */
const ANOTHER_PROCESS =
  "another process has this run (two workers resumed it at once, or a process taken for dead came back), so nothing was written and this recorder cannot go on: leave the run to that writer";

/**
 * The `conflict` or `run-closed` of a recorder that had read its run (a resumed one, or one
 * that has written to it) and lost it to another writer, told as such: "run r is at seq 19, the
 * writer expected 17" does not say that another process has the run, which is what a worker
 * that lost a race, or a zombie of a crashed process, must hear. When what was written since is
 * a person's decisions only (`agent-ledger resolve`, or `--cancel-open`, while the worker
 * resumed), it says that instead: no process has the run, and a resume hears the decision.
 * Code, class and fields are the store's. The `run-closed` of a run this recorder found closed
 * says that it had ended before the resume (`closedBeforeResume`). Undefined for any other
 * error, and for a `run-closed` of a run this recorder closed.
 */
export async function runTakenElsewhere(
  state: RecorderState,
  error: unknown,
): Promise<ConflictError | RunClosedError | undefined> {
  const { sessionId, runId } = state;
  if (LedgerError.isInstance(error, "conflict")) {
    const { expectedSeq, actualSeq } = error;
    if (!(expectedSeq > 0 && actualSeq !== expectedSeq)) return undefined;
    const decided = actualSeq > expectedSeq ? await decisionsSince(state, expectedSeq) : undefined;
    if (decided !== undefined)
      return new ConflictError({
        expectedSeq,
        actualSeq,
        sessionId,
        runId,
        message: `run ${runId} was written since this recorder read it (it is at seq ${actualSeq}, this recorder expected ${expectedSeq}) by a person's decision, not by another process: ${decided.map(decisionText).join("; ")}. Nothing was written, and this recorder cannot go on: resume the run again (SessionRecorder.resume reads it as it now is), and the resume goes on with that decision.`,
      });
    return new ConflictError({
      expectedSeq,
      actualSeq,
      sessionId,
      runId,
      message: `run ${runId} was written by another writer since this recorder read it (it is at seq ${actualSeq}, this recorder expected ${expectedSeq}): ${ANOTHER_PROCESS}. SessionRecorder.resume reads the run as it now is.`,
    });
  }
  if (!LedgerError.isInstance(error, "run-closed")) return undefined;
  if (state.recordedEnd !== undefined) return closedBeforeResume(state, state.recordedEnd);
  if (state.status !== "running") return undefined;
  const status = error.details?.status;
  if (typeof status !== "string") return undefined;
  const decided = await decisionsSince(state, state.queue.nextSeq);
  const end = decided?.at(-1);
  if (end?.type === "run.cancelled")
    return new RunClosedError({
      sessionId,
      runId,
      status,
      message: `run ${runId} was cancelled by ${whoAndWhy(end)} while this recorder had it open, a person's decision, not another process: nothing was written, and a closed run accepts no more events.`,
    });
  return new RunClosedError({
    sessionId,
    runId,
    status,
    message: `another writer closed run ${runId} (it is ${status}) while this recorder had it open: ${ANOTHER_PROCESS}; a closed run accepts no more events.`,
  });
}

/** What a person writes on a run (`agent-ledger resolve`, `delete` and `prune --cancel-open`). */
const DECISIONS: ReadonlySet<string> = new Set([
  "attempt.abandoned",
  "attempt.approved",
  "run.cancelled",
]);
/** More than this written since is not a person deciding a few calls. */
const MOST_DECISIONS = 20;

/**
 * The events of the run from `fromSeq` on when each is a person's decision (a human actor's),
 * else undefined; undefined too when they cannot be read (the error is told as before).
 */
async function decisionsSince(
  state: RecorderState,
  fromSeq: number,
): Promise<LedgerEvent[] | undefined> {
  const { sessionId, runId } = state;
  try {
    const { events } = await state.store.readRun({
      sessionId,
      runId,
      fromSeq,
      limit: MOST_DECISIONS + 1,
    });
    if (events.length === 0 || events.length > MOST_DECISIONS) return undefined;
    const byPerson = events.every(
      (event) => DECISIONS.has(event.type) && event.actor?.type === "human",
    );
    return byPerson ? events : undefined;
  } catch {
    return undefined;
  }
}

/** `on-call abandoned attempt a1 ("checked: sent")`, and so on. */
function decisionText(event: LedgerEvent): string {
  if (event.type === "attempt.abandoned")
    return whoAndWhy(event, `abandoned attempt ${event.attemptId}`);
  if (event.type === "attempt.approved")
    return whoAndWhy(event, `approved a re-run of attempt ${event.attemptId}`);
  return whoAndWhy(event, "cancelled the run");
}

/** `on-call <did> ("reason")`: who decided, what, and the reason (its first 200 characters). */
function whoAndWhy(event: LedgerEvent, did?: string): string {
  const who = event.actor?.id ?? "a person";
  const reason = (event.payload as { reason?: unknown } | null)?.reason;
  const why =
    typeof reason === "string"
      ? ` (${JSON.stringify(reason.length > 200 ? `${reason.slice(0, 200)}…` : reason)})`
      : "";
  return did === undefined ? `${who}${why}` : `${who} ${did}${why}`;
}
