import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { LedgerEvent } from "../../../events/types.js";
import type { EventStore } from "../../../store/event-store.js";
import type { RacerTarget } from "./racer-store.js";
import { runTestChild } from "./run-child.js";

// The compiled child script: tests run from src, children run the built dist (`npx tsc -b`).
export const racerScript = fileURLToPath(
  new URL("../../../../dist/stores/sql/testing/append-racer.js", import.meta.url),
);

/** Runs one racer child to its end; rejects with its stderr when it fails. */
export function runRacer(
  argument: object,
): Promise<{ appended: number; conflicts: number; refused: number }> {
  return runTestChild(racerScript, argument, "racer");
}

export interface RaceOutcome {
  /** Every event of the session, read at the end. */
  events: LedgerEvent[];
  /** What the tailing reader saw, in the order it saw it. */
  tailed: LedgerEvent[];
  conflicts: number;
  /** Batches the writers sent that the store refused whole, as it had to. */
  refused: number;
}

/**
 * Spawns `writers` child processes that each append `perWriter` events to one run
 * (`sharedRun`) or to a run of their own, all in one session, while this process tails
 * `readSession` by cursor with `reader`.
 */
export async function runAppendRace(options: {
  target: RacerTarget;
  reader: EventStore;
  sessionId: string;
  sharedRun: boolean;
  writers: number;
  perWriter: number;
}): Promise<RaceOutcome> {
  if (!existsSync(racerScript))
    throw new Error(`${racerScript} is missing: build the package first (npx tsc -b)`);
  let running = true;
  const children = Promise.all(
    Array.from({ length: options.writers }, (_, writer) =>
      runRacer({
        target: options.target,
        sessionId: options.sessionId,
        runId: options.sharedRun ? "shared" : `run-${writer}`,
        writer,
        count: options.perWriter,
      }),
    ),
  ).finally(() => {
    running = false;
  });
  // The reader initialises too, while the children race on init() in their processes.
  await options.reader.init();
  const tailed: LedgerEvent[] = [];
  let after = 0;
  const tail = async () => {
    for (;;) {
      const finished = !running;
      const page = await options.reader.readSession({
        sessionId: options.sessionId,
        after,
        limit: 7,
      });
      tailed.push(...page.events);
      after = page.nextCursor;
      if (page.events.length === 0) {
        if (finished) return;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
  };
  const [results] = await Promise.all([children, tail()]);
  const all = await options.reader.readSession({ sessionId: options.sessionId });
  return {
    events: all.events,
    tailed,
    conflicts: results.reduce((sum, result) => sum + result.conflicts, 0),
    refused: results.reduce((sum, result) => sum + result.refused, 0),
  };
}

/**
 * What a race must leave behind: every event once, cursors exactly 1..N in commit order, each
 * run's seqs 0..n-1 once with an unbroken hash chain, and a tailing reader that saw every
 * event exactly once, in cursor order.
 */
export function checkRaceOutcome(
  outcome: RaceOutcome,
  options: { writers: number; perWriter: number; sharedRun: boolean },
): void {
  const total = options.writers * options.perWriter;
  const range = (n: number, from: number) => Array.from({ length: n }, (_, index) => from + index);
  assert.equal(outcome.events.length, total, "every appended event is stored");
  // Each writer sent two refused batches every fifth append (append-racer.ts).
  assert.equal(outcome.refused, options.writers * Math.floor(options.perWriter / 5) * 2);
  assert.deepEqual(
    outcome.events.filter((event) => event.eventId.startsWith("refused-")),
    [],
    "nothing of a refused batch is stored",
  );
  assert.deepEqual(
    outcome.events.map((event) => event.commitCursor),
    range(total, 1),
    "commit cursors are exactly 1..N",
  );
  assert.equal(new Set(outcome.events.map((event) => event.eventId)).size, total, "no duplicate");
  assert.deepEqual(
    outcome.tailed.map((event) => event.commitCursor),
    range(total, 1),
    "the tailing reader saw every event once, in cursor order",
  );
  const byRun = new Map<string, LedgerEvent[]>();
  for (const event of outcome.events)
    byRun.set(event.runId, [...(byRun.get(event.runId) ?? []), event]);
  assert.equal(byRun.size, options.sharedRun ? 1 : options.writers);
  for (const [runId, events] of byRun) {
    const sorted = [...events].sort((a, b) => a.seq - b.seq);
    assert.deepEqual(
      sorted.map((event) => event.seq),
      range(events.length, 0),
      `run ${runId}: seq 0..n-1 once each`,
    );
    sorted.forEach((event, index) => {
      assert.equal(event.prevHash, index === 0 ? null : sorted[index - 1]?.hash, "hash chain");
    });
  }
}
