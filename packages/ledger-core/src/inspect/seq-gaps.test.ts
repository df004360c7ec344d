import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectSession, runsInTreeOrder, SeqGaps } from "../index.js";
import type { EventStore } from "../store/event-store.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { sessionWithDeletedRows } from "./deleted-rows.test.data.js";

const folder = scratchDirectory("agent-ledger-seq-gaps-", { beforeAll, afterAll });

/** `SeqGaps` told the session's events a page of `limit` at a time, as a streaming reader does. */
async function streamed(store: EventStore, limit: number): Promise<SeqGaps> {
  const gaps = await SeqGaps.of(store, "s");
  let after = 0;
  for (;;) {
    const page = await store.readSession({ sessionId: "s", after, limit });
    gaps.add(page.events);
    if (page.events.length < limit) return gaps;
    after = page.nextCursor;
  }
}

describe("SeqGaps", () => {
  it.each([
    ["middle", [2], [{ runId: "main", length: 5, seqGap: { after: 1, next: 3 } }]],
    // Only the first gap, where the run's first events are missing.
    ["start", [0, 1, 3], [{ runId: "main", length: 5, seqGap: { after: -1, next: 2 } }]],
    // The store still records the closed run at 5 events: its tail is missing.
    ["tail", [2, 3, 4], [{ runId: "main", length: 2, seqGap: { after: 1, next: 5 } }]],
    ["intact", [], []],
  ])(
    "finds, a page at a time, the runs not intact that inspectSession marks (%s)",
    async (name, deleted, expected) => {
      const store = await sessionWithDeletedRows(join(folder, `${name}.db`), deleted);
      // Pages of 2 put a gap between pages as well as within one.
      for (const limit of [2, 1000]) {
        const found = (await streamed(store, limit)).found();
        expect(found, `pages of ${limit}`).toEqual(expected);
      }
      // The rule is inspectSession's: the same runs, the same gaps.
      const inspection = await inspectSession(store, "s");
      const marked = Array.from(runsInTreeOrder(inspection.runs), ({ run }) => run)
        .filter((run) => run.seqGap !== undefined)
        .map(({ runId, length, seqGap }) => ({ runId, length, seqGap }));
      expect(marked).toEqual(expected);
      await store.close();
    },
  );

  it("finds nothing in a session it was told no events of", async () => {
    const store = await sessionWithDeletedRows(join(folder, "unread.db"), [2]);
    expect((await SeqGaps.of(store, "s")).found()).toEqual([]);
    await store.close();
  });
});
