import { expect } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { verifyRun } from "../../inspect/verify-run.js";
import { blobExists } from "../../testing/conformance-retention.js";
import { acrossStores } from "./testing/across-stores.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";
import { runBlobWriter } from "./testing/run-blob-writer.js";

// collectBlobs across processes: this process sweeps the whole store, pass after pass, while
// child processes put blobs (some shared, whose old unnamed copies each pass may take) and
// append the events naming them. No committed event may name a collected blob, and every
// orphan older than the grace is gone at the end.

const graceMs = 300;

async function checkCollectRace(target: RacerTarget): Promise<void> {
  const store = await openRacerStore(target);
  await store.init();
  try {
    const shared = Array.from({ length: 3 }, (_, index) => `shared ${index} ${uuidv7()}`);
    // Old, unnamed copies of the shared content, and orphans nothing will name.
    await Promise.all(shared.map((content) => store.putBlob(content)));
    const orphans = await Promise.all(
      Array.from({ length: 20 }, (_, index) => store.putBlob(`orphan ${index} ${uuidv7()}`)),
    );
    const claimedByNobody = await store.putBlob(`claimed, never named ${uuidv7()}`, {
      sessionId: "never-appends",
    });
    await new Promise((resolve) => setTimeout(resolve, graceMs + 100));

    const writers = ["writer-0", "writer-1", "writer-2", "writer-3"];
    let running = true;
    const written = Promise.all(
      writers.map((sessionId, index) =>
        runBlobWriter({
          target,
          sessionId,
          shared,
          turns: 20,
          pauseMs: graceMs / 6,
          claim: index % 2 === 1,
        }),
      ),
    ).finally(() => {
      running = false;
    });
    let passes = 0;
    let passesWhileWriting = 0;
    let deleted = 0;
    const sweep = async () => {
      while (running) {
        deleted += (await store.collectBlobs({ blobGraceMs: graceMs })).deletedBlobs;
        passes++;
        if (running) passesWhileWriting++;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    const [results] = await Promise.all([written, sweep()]);
    deleted += (await store.collectBlobs({ blobGraceMs: graceMs })).deletedBlobs;
    expect(passesWhileWriting, `${passes} passes`).toBeGreaterThan(3);

    for (const [index, result] of results.entries()) {
      const sessionId = writers[index] as string;
      for (const ref of result.refs)
        expect(await blobExists(store, ref), `${sessionId} names ${ref}`).toBe(true);
      expect(await verifyRun(store, { sessionId, runId: "writer" })).toMatchObject({ ok: true });
    }
    for (const ref of [...orphans, claimedByNobody])
      expect(await blobExists(store, ref), `orphan ${ref}`).toBe(false);
    expect(deleted).toBeGreaterThanOrEqual(orphans.length + 1);
  } finally {
    await store.close();
  }
}

await acrossStores(
  {
    topic: "collectBlobs across processes",
    test: "sweeps the store while other processes put blobs and name them: no named blob is taken, every orphan is",
    label: "collect_race",
  },
  checkCollectRace,
);
