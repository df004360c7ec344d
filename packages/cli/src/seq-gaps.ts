import { type EventStore, LedgerError } from "@agent-ledger/core";
import { withReadSession } from "./store.js";

/** A run's seqs as read so far, with the first gap found in them (as `RunView.seqGap`). */
export interface RunSeqs {
  runId: string;
  /** Its last seq read + 1. */
  length: number;
  seqGap?: { after: number; next: number };
}

/**
 * The runs whose seqs have a gap, found as a session's events go by, as `inspectSession` marks
 * `RunView.seqGap` (core's session-inspector.ts and markMissingTails), with a length per run
 * and not the run tree: `export --format jsonl` streams a session a page at a time.
 */
export class SeqGaps {
  readonly #read = new Map<string, RunSeqs>();
  readonly #recorded: Map<string, number>;

  private constructor(recorded: Map<string, number>) {
    this.#recorded = recorded;
  }

  /**
   * Starts with the runs' lengths as the store records them, read before the events: a run
   * written meanwhile then reads longer than recorded, never shorter (shorter: its last events
   * are gone). None where a run's stored head cannot be read (an open run's last row changed by
   * hand), as for inspectSession: the read of the events names that row as it meets it.
   */
  static async of(store: EventStore, sessionId: string): Promise<SeqGaps> {
    try {
      const runs = await store.listRuns(sessionId);
      return new SeqGaps(new Map(runs.map((run) => [run.runId, run.length])));
    } catch (error) {
      if (LedgerError.isInstance(error, "tamper-detected")) return new SeqGaps(new Map());
      throw error;
    }
  }

  /** Events read, in commit order (a run's in seq order). */
  add(events: readonly { runId: string; seq: number }[]): void {
    for (const { runId, seq } of events) {
      let run = this.#read.get(runId);
      if (run === undefined) {
        run = { runId, length: 0 };
        this.#read.set(runId, run);
      }
      if (seq !== run.length && run.seqGap === undefined)
        run.seqGap = { after: run.length - 1, next: seq };
      run.length = seq + 1;
    }
  }

  /**
   * The runs read whose seqs have a gap, in the order first read: a gap among the events read,
   * else a run recorded longer than read (its last events deleted).
   */
  found(): RunSeqs[] {
    const found: RunSeqs[] = [];
    for (const run of this.#read.values()) {
      const recorded = this.#recorded.get(run.runId);
      if (run.seqGap !== undefined) found.push(run);
      else if (recorded !== undefined && recorded > run.length)
        found.push({ ...run, seqGap: { after: run.length - 1, next: recorded } });
    }
    return found;
  }
}

/** `store` with each page its `readSession` answers told to `gaps`. */
export function readsToldTo(store: EventStore, gaps: SeqGaps): EventStore {
  return withReadSession(store, async (request, readSession) => {
    const page = await readSession(request);
    gaps.add(page.events);
    return page;
  });
}
