import { RunClosedError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import type { RecorderState } from "./recorder-state.js";

/** What a loop re-executed on a closed run writes again that is not matched by content. */
type AnsweredRecord = "checkpoint.saved" | "evidence.recorded";

/**
 * The checkpoints and evidence records of a run that was already closed when its recorder loaded
 * it, given back in their order to the loop that re-executes it (the README's "re-execute a loop
 * after its run was closed"). On an open run they are appended again; on a closed one there is
 * nowhere to append, and refusing stopped the loop before it reached the recorded end its caller
 * never heard of. Their payloads are not compared (a checkpoint often carries a time or a
 * framework's serialized state), as `startRun`'s are not: the model and tool calls and the input
 * around them are what tell whether the loop re-executes the same run.
 */
export class ClosedRunRecords {
  readonly #recorded = new Map<AnsweredRecord, LedgerEvent[]>([
    ["checkpoint.saved", []],
    ["evidence.recorded", []],
  ]);

  constructor(events: readonly LedgerEvent[]) {
    for (const event of events) this.#recorded.get(event.type as AnsweredRecord)?.push(event);
  }

  /** The next recorded event of `type` not given back yet, or undefined when all were. */
  take(type: AnsweredRecord): LedgerEvent | undefined {
    return this.#recorded.get(type)?.shift();
  }
}

/**
 * The recorded `checkpoint.saved` or `evidence.recorded` that answers a re-executed loop's next
 * one on a run closed before this recorder loaded it; undefined on a run that was not closed
 * then (the record is to be appended). A record beyond the recorded ones is refused, saying so.
 */
export function answeredByClosedRun(
  state: RecorderState,
  type: AnsweredRecord,
): LedgerEvent | undefined {
  const end = state.recordedEnd;
  if (end === undefined) return undefined;
  const recorded = state.closedRecords?.take(type);
  if (recorded !== undefined) return recorded;
  throw closedBeforeResume(state, end);
}

/**
 * The `run-closed` of a write on a run that had ended before this recorder loaded it, in words
 * that say so: the store's "run r is completed and accepts no more events" reads like a race
 * lost to another writer, and does not tell the caller that it re-executes a finished run.
 */
export function closedBeforeResume(state: RecorderState, end: LedgerEvent): RunClosedError {
  const { sessionId, runId, status } = state;
  return new RunClosedError({
    sessionId,
    runId,
    status,
    message: `run ${runId} had already ${status} when this recorder resumed it (its ${end.type} is seq ${end.seq}): nothing was written, and a closed run accepts no more events. A loop re-executed on it is answered from the ledger (its input, calls, checkpoints and evidence as recorded, and its end when it closes the run as it closed), and this write is not among what it recorded. To act on a resumed run only while it is open, check recorder.status after SessionRecorder.resume: a run that is not "running" has ended, and re-executing it records nothing new.`,
  });
}
