import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { blobExists } from "../../testing/conformance-retention.js";
import { acrossStores } from "./testing/across-stores.js";
import { blobRowHarness, until } from "./testing/blob-row-harness.js";
import type { RacerTarget } from "./testing/racer-store.js";

// The row locks of blob rows: an append (or a put) that stores blobs upserts their rows in ref
// order; a collectBlobs page (or a deleteSession) that deletes them must lock them in that
// order too, or the two deadlock: the delete holds a later row and waits for an earlier one
// that the append holds while it waits for the later. The store runs the victim again, so no
// caller sees an error, but each deadlock costs a rollback and, on PostgreSQL, deadlock_timeout
// (1 s by default) of waiting first. The servers' own deadlock reports are counted here.
// PostgreSQL's DELETE visited the rows as its plan chose (here, as they lie in the table) and
// deadlocked every time; MariaDB's deletes by primary key, in key order, never did.
//
// The interleaving is made exact with a third connection that holds the first blob's row (by
// ref): the append queues for it first, holding nothing, then the deletion, which locks in ref
// order too and so holds nothing either (one that visited the rows in the table's order would
// hold all the others, stored first, and deadlock with the append); then the row is let go, the
// append takes it and goes on to the next.
//
// The row is held past the grace once both wait: the append stamped the blob's touched_at as
// its upsert began, before it waited, so that stamp is past the grace when the deletion gets
// the row after the append's commit, and only the append's claim keeps the blob. PostgreSQL's
// deletion, one statement whose snapshot predated that commit, judged the claim missing and
// deleted the blob of a committed append (a loaded machine once made the wait long enough).

const GRACE_MS = 300;

/** Blobs per test: a deletion whose plan visits their rows in some order of its own starts
 * with the first ref's row only by chance (1 in 8). */
const BLOBS = 8;

/** BLOBS contents, the one whose ref sorts last first. */
function contentsByRefDescending(label: string): { contents: string[]; refs: string[] } {
  const tag = uuidv7();
  const contents = Array.from({ length: BLOBS }, (_, index) => `${label} ${index} ${tag}`);
  const ref = (content: string) =>
    `sha256:${createHash("sha256").update(content, "utf8").digest("hex")}`;
  contents.sort((left, right) => (ref(left) < ref(right) ? 1 : -1));
  return { contents, refs: contents.map(ref) };
}

/** How the collector deletes the old blobs: a pass over the store, or their session's deletion. */
type Deletion = "collectBlobs" | "deleteSession";

async function checkLockOrder(target: RacerTarget, deletion: Deletion): Promise<void> {
  const harness = await blobRowHarness(target);
  const { writer, collector } = harness;
  try {
    await writer.init();
    await collector.init();
    const { contents, refs } = contentsByRefDescending("old, stored again");
    const first = refs[refs.length - 1] as string;
    // Past the grace, stored last ref first: orphans, or a closed session's blobs.
    const gone = `gone-${uuidv7()}`;
    for (const content of contents)
      await writer.putBlob(content, deletion === "deleteSession" ? { sessionId: gone } : {});
    if (deletion === "deleteSession")
      await writer.append({
        sessionId: gone,
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }, { type: "run.completed", payload: {} }],
      });
    await sleep(GRACE_MS + 100);

    const blocker = await harness.hold(first);
    const appended = writer.append({
      sessionId: `s-${uuidv7()}`,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", evidenceRefs: refs }],
      blobs: contents,
    });
    await until("the append waiting", async () => (await harness.waiting()) === 1);
    const deleted =
      deletion === "collectBlobs"
        ? collector.collectBlobs({ blobGraceMs: GRACE_MS })
        : collector.deleteSession(gone, { blobGraceMs: GRACE_MS });
    await until("the deletion waiting", async () => (await harness.waiting()) === 2);
    await sleep(GRACE_MS + 50);
    await blocker.release();

    // Whichever of the two gets the row first, the blobs of the committed append stay.
    await Promise.all([appended, deleted]);
    for (const ref of refs) expect(await blobExists(writer, ref), ref).toBe(true);
    expect(harness.deadlocks.count(), "deadlocks reported by the server").toBe(0);
  } finally {
    await writer.close();
    await collector.close();
    await harness.close();
  }
}

for (const deletion of ["collectBlobs", "deleteSession"] as const)
  await acrossStores(
    {
      topic: `${deletion} against an append storing the same blobs`,
      test: "locks the blob rows in the append's order: no deadlock",
      label: "lock_order",
      kinds: ["postgres", "mysql"],
    },
    (target) => checkLockOrder(target, deletion),
  );
