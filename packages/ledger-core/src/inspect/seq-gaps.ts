import { LedgerError } from "../events/errors.js";
import type { EventStore } from "../store/event-store.js";

// The one rule for a run that is not intact (`RunView.seqGap`), kept here so that
// `inspectSession`, which holds the run tree, and a reader that streams a session a page at a
// time (the CLI's `export`) say the same of the same rows.

/** Where a run's seqs as read stop being gap-free from 0 (see `RunView.seqGap`). */
export interface SeqGap {
  after: number;
  next: number;
}

/** A run's seqs as read so far, with the first gap found in them (as `RunView.seqGap`). */
export interface RunSeqs {
  runId: string;
  /** Its last seq read + 1. */
  length: number;
  seqGap?: SeqGap;
}

/**
 * Tells `run` the seq of its next event read (a run's events come in seq order): the first
 * seq that is not the one after the last read is the gap reported; a later one is not.
 */
export function addSeq(run: Pick<RunSeqs, "length" | "seqGap">, seq: number): void {
  if (seq !== run.length && run.seqGap === undefined)
    run.seqGap = { after: run.length - 1, next: seq };
  run.length = seq + 1;
}

/**
 * The gap of `run` once read to the end: the first among its events, else, when the store
 * records it longer than read (`recordedLength`), its missing tail (its last events deleted,
 * a closed run's end among them); undefined when it is intact.
 */
export function seqGapOf(
  run: Pick<RunSeqs, "length" | "seqGap">,
  recordedLength: number | undefined,
): SeqGap | undefined {
  if (run.seqGap !== undefined) return run.seqGap;
  if (recordedLength !== undefined && recordedLength > run.length)
    return { after: run.length - 1, next: recordedLength };
  return undefined;
}

/**
 * The session's runs' lengths as the store records them, by runId; to be read before the
 * events, so a run written meanwhile reads longer than recorded, never shorter (shorter: its
 * last events are gone). None where a run's stored head cannot be read (an open run's last row
 * changed by hand): the read of the events then names that row as it meets it.
 */
export async function recordedRunLengths(
  store: EventStore,
  sessionId: string,
): Promise<Map<string, number>> {
  try {
    const runs = await store.listRuns(sessionId);
    return new Map(runs.map((run) => [run.runId, run.length]));
  } catch (error) {
    if (LedgerError.isInstance(error, "tamper-detected")) return new Map();
    throw error;
  }
}

/**
 * The runs whose seqs have a gap, found as a session's events go by, as `inspectSession` marks
 * `RunView.seqGap`, with a length per run and not the run tree: for a reader that streams a
 * session a page at a time. Make it with `SeqGaps.of` before reading the events, tell it each
 * page read (`add`), then ask it which runs are not intact (`found`).
 */
export class SeqGaps {
  readonly #read = new Map<string, RunSeqs>();
  readonly #recorded: Map<string, number>;

  private constructor(recorded: Map<string, number>) {
    this.#recorded = recorded;
  }

  /** Starts with the runs' lengths as the store records them (`recordedRunLengths`). */
  static async of(store: EventStore, sessionId: string): Promise<SeqGaps> {
    return new SeqGaps(await recordedRunLengths(store, sessionId));
  }

  /** Events read, in commit order (a run's in seq order). */
  add(events: readonly { runId: string; seq: number }[]): void {
    for (const { runId, seq } of events) {
      let run = this.#read.get(runId);
      if (run === undefined) {
        run = { runId, length: 0 };
        this.#read.set(runId, run);
      }
      addSeq(run, seq);
    }
  }

  /**
   * The runs read whose seqs have a gap, in the order first read: a gap among the events read,
   * else a run recorded longer than read (its last events deleted).
   */
  found(): RunSeqs[] {
    const found: RunSeqs[] = [];
    for (const run of this.#read.values()) {
      const seqGap = seqGapOf(run, this.#recorded.get(run.runId));
      if (seqGap !== undefined) found.push({ runId: run.runId, length: run.length, seqGap });
    }
    return found;
  }
}
