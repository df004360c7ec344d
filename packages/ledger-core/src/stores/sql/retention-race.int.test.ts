import { expect } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { verifyRun } from "../../inspect/verify-run.js";
import { blobExists } from "../../testing/conformance-retention.js";
import { acrossStores } from "./testing/across-stores.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";
import { runBlobWriter } from "./testing/run-blob-writer.js";

// Retention across processes: sessions are deleted in this process while child processes put
// blobs those sessions share and append the events naming them, and while one child still
// writes the session being deleted. No committed event may name a collected blob, and the
// victims are deleted while the writers are still appending, after the shared blobs' grace.

const graceMs = 300;

async function checkRetentionRace(target: RacerTarget): Promise<void> {
  const store = await openRacerStore(target);
  await store.init();
  try {
    const shared = Array.from({ length: 3 }, (_, index) => `shared ${index} ${uuidv7()}`);
    const victims = Array.from({ length: 4 }, (_, index) => `victim-${index}`);
    for (const sessionId of victims) {
      const refs = await Promise.all(
        [...shared, `${sessionId} own`].map((content) => store.putBlob(content)),
      );
      await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 0,
        events: [
          { type: "run.started", evidenceRefs: refs },
          { type: "run.completed", payload: {} },
        ],
      });
    }
    // Every blob so far is past its grace: only the reference index keeps one now.
    await new Promise((resolve) => setTimeout(resolve, graceMs + 100));

    const writers = ["writer-0", "writer-1", "writer-2", "contested"];
    let running = true;
    const written = Promise.all(
      writers.map((sessionId) =>
        runBlobWriter({ target, sessionId, shared, turns: 24, pauseMs: graceMs / 6 }),
      ),
    ).finally(() => {
      running = false;
    });
    let contestedDeleted = false;
    let overlapped = false;
    const remove = async () => {
      // Once every writer has committed the event naming the shared blobs and their grace has
      // passed, only the writers' references keep those blobs.
      for (const sessionId of writers)
        while ((await store.readSession({ sessionId })).events.length < 2)
          await new Promise((resolve) => setTimeout(resolve, 10));
      await new Promise((resolve) => setTimeout(resolve, graceMs + 50));
      for (const sessionId of victims) {
        await store.deleteSession(sessionId, { blobGraceMs: graceMs });
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      overlapped = running;
      // The writer of "contested" keeps its run open until its last turn: refused until then.
      while (!contestedDeleted) {
        const finished = !running;
        try {
          await store.deleteSession("contested", { blobGraceMs: graceMs });
          contestedDeleted = true;
        } catch (error) {
          const code = (error as { code?: string }).code;
          if (code !== "invalid-argument" && code !== "not-found") throw error;
          if (finished && code === "not-found") break;
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
      }
    };
    const [results] = await Promise.all([written, remove()]);
    expect(contestedDeleted).toBe(true);
    expect(overlapped, "the victims were deleted while the writers still wrote").toBe(true);

    for (const [index, result] of results.entries()) {
      const sessionId = writers[index] as string;
      if (sessionId === "contested") continue;
      for (const ref of result.refs)
        expect(await blobExists(store, ref), `${sessionId} names ${ref}`).toBe(true);
      expect(await verifyRun(store, { sessionId, runId: "writer" })).toMatchObject({ ok: true });
    }
    for (const sessionId of [...victims, "contested"])
      expect((await store.readSession({ sessionId })).events).toEqual([]);
    // A deleted session's id starts clean.
    const reused = await store.append({
      sessionId: "contested",
      runId: "writer",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    expect(reused.events[0]).toMatchObject({ seq: 0, commitCursor: 1, prevHash: null });
    expect((await store.listRuns("contested")).map((run) => run.length)).toEqual([1]);
  } finally {
    await store.close();
  }
}

await acrossStores(
  {
    topic: "retention across processes",
    test: "deletes sessions while other processes put the blobs they share and name them",
    label: "retention",
  },
  checkRetentionRace,
);
