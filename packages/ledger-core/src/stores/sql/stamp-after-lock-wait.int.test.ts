import { setTimeout as sleep } from "node:timers/promises";
import { expect } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { uuidv7 } from "../../events/ids.js";
import { blobExists } from "../../testing/conformance-retention.js";
import { acrossStores } from "./testing/across-stores.js";
import { blobRowHarness, type Hold, until } from "./testing/blob-row-harness.js";
import type { RacerTarget } from "./testing/racer-store.js";

// A put of a blob that is already stored waits for its row when another transaction holds it
// (a collection locking it, then deleting it; another writer). The retention contract ("put a
// blob, then name it within the grace") needs the stamp the put leaves to be taken once the
// row is its own, not as its statement began: a put that waited past the grace and stamped
// the start left a blob the next collection deleted, right after the put answered.
// The row is held here by a third connection, longer than the grace, while the put waits.

const GRACE_MS = 300;

/** How the blob is stored again: a put without a session, or an append that carries it. */
type Path = "putBlob" | "append";

async function checkStamp(target: RacerTarget, path: Path, how: Hold): Promise<void> {
  const harness = await blobRowHarness(target);
  const { writer, collector } = harness;
  let blocker: Awaited<ReturnType<typeof harness.hold>> | undefined;
  try {
    await writer.init();
    await collector.init();
    const content = `stored again ${uuidv7()}`;
    const ref = `sha256:${sha256Hex(content)}`;
    await writer.putBlob(content);
    await sleep(GRACE_MS + 100);

    blocker = await harness.hold(ref, how);
    const stored =
      path === "putBlob"
        ? writer.putBlob(content)
        : writer.append({
            sessionId: `s-${uuidv7()}`,
            runId: "r",
            expectedSeq: 0,
            events: [{ type: "run.started", evidenceRefs: [ref] }],
            blobs: [content],
          });
    await until("the put waiting", async () => (await harness.waiting()) === 1);
    await sleep(GRACE_MS + 50);
    await blocker.release();
    blocker = undefined;
    await stored;

    const age = await harness.stampAgeMs(ref);
    // Right after the put: a collection keeps the blob (an append's claim would keep it
    // anyway, so only the stamp tells there).
    if (path === "putBlob") await collector.collectBlobs({ blobGraceMs: GRACE_MS });
    expect(await blobExists(writer, ref), `blob kept (stamped ${age} ms before)`).toBe(true);
    expect(age, "the stamp's age right after the put, in ms").toBeLessThan(GRACE_MS);
  } finally {
    await blocker?.release();
    await writer.close();
    await collector.close();
    await harness.close();
  }
}

for (const path of ["putBlob", "append"] as const)
  for (const how of ["lock", "delete"] as const)
    await acrossStores(
      {
        topic: `${path} of a stored blob whose row another transaction holds (${how}) past the grace`,
        test: "stamps the blob once it has the row: a collection right after keeps it",
        label: "stamp_wait",
        kinds: ["postgres", "mysql"],
      },
      (target) => checkStamp(target, path, how),
    );
