import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import type { EventStore } from "../../store/event-store.js";
import { acrossStores } from "./testing/across-stores.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";
import { BLOBS_PER_PAGE } from "./write-program.js";

// `agent-ledger collect-blobs` stopped by Ctrl-C passes collectBlobs an aborted signal part
// way through a sweep: it must stop between pages (on SQLite too, whose pages complete
// synchronously, so no abort from a timer or a signal handler would be seen without a turn of
// the event loop between them) and count exactly what it deleted, which the CLI reports.

/** Which of `refs` the store still holds. */
async function stored(store: EventStore, refs: string[]): Promise<string[]> {
  const found = await (store.getBlobs as NonNullable<EventStore["getBlobs"]>)(refs);
  return refs.filter((ref) => found.has(ref));
}

async function checkStoppedSweep(target: RacerTarget): Promise<void> {
  const store = await openRacerStore(target);
  await store.init();
  const putBlobs = store.putBlobs?.bind(store) as NonNullable<EventStore["putBlobs"]>;
  try {
    const tag = uuidv7();
    // Pages enough that the sweep is still running when the watcher sees its first deletions.
    const orphans = await putBlobs(
      Array.from({ length: 8 * BLOBS_PER_PAGE + 37 }, (_, index) => `orphan ${index} ${tag}`),
    );
    const controller = new AbortController();
    // Aborted from a timer once blobs start to go, as a Ctrl-C part way through. It watches
    // every 50th blob (a page of 500 takes about ten of them, in any order the store sweeps):
    // reading all of them at each look took as long as the sweep's pages, which on a busy
    // machine all went before the first look came back.
    const watched = orphans.filter((_, index) => index % 50 === 0);
    const watcher = (async () => {
      while (!controller.signal.aborted) {
        await sleep(1);
        if ((await stored(store, watched)).length < watched.length) controller.abort();
      }
    })();
    const result = await store.collectBlobs({ blobGraceMs: 0, signal: controller.signal });
    controller.abort();
    await watcher;
    const left = await stored(store, orphans);
    expect(left.length, "stopped before the end").toBeGreaterThan(0);
    expect(result).toEqual({ deletedBlobs: orphans.length - left.length, stopped: true });
    // The blobs not looked at were kept, and a next pass takes them.
    expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: left.length });
    expect(await stored(store, orphans)).toEqual([]);
  } finally {
    await store.close();
  }
}

await acrossStores(
  {
    topic: "collectBlobs stopped by its signal",
    test: "stops between pages once aborted, and says exactly how many blobs it deleted",
    label: "collect_stop",
  },
  checkStoppedSweep,
);
