import { expect } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { uuidv7 } from "../../events/ids.js";
import type { AppendRequest, EventStore } from "../../store/event-store.js";
import { blobExists } from "../../testing/conformance-retention.js";
import { acrossStores } from "./testing/across-stores.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";

// The conformance suite lets a refused append leave its blobs claimed by the session (on a
// Redis Cluster they are put ahead of the script, on nodes out of its reach). The SQL stores
// and Redis on one server promise more: the blobs go in the append's own transaction (its
// script), so a refused append stores none of them, on the one-statement path (a cached head)
// and on the transactional program (a script that reads first) alike.

/** `request` carrying a new blob its event names; refused with `code`, and the blob absent. */
async function refusedWithoutBlob(
  store: EventStore,
  label: string,
  request: Omit<AppendRequest, "events" | "blobs">,
  code: string,
  eventId?: string,
): Promise<void> {
  const content = `${label} ${uuidv7()} ${"words ".repeat(40)}`;
  const ref = `sha256:${sha256Hex(content)}`;
  await expect(
    store.append({
      ...request,
      events: [{ ...(eventId ? { eventId } : {}), type: "x.named", evidenceRefs: [ref] }],
      blobs: [content],
    }),
    label,
  ).rejects.toMatchObject({ code });
  expect(await blobExists(store, ref), `${label}: blob stored`).toBe(false);
}

async function checkRefusedAppends(target: RacerTarget): Promise<void> {
  const [a, b] = [await openRacerStore(target), await openRacerStore(target)];
  try {
    await Promise.all([a.init(), b.init()]);
    const sessionId = `refused-${uuidv7()}`;
    const run = { sessionId, runId: "r" };
    const started = await a.append({ ...run, expectedSeq: 0, events: [{ type: "run.started" }] });
    // The transactional program: an expectedSeq the cached head does not match.
    await refusedWithoutBlob(a, "stale expectedSeq", { ...run, expectedSeq: 0 }, "conflict");
    // The one-statement path on a stale cached head (B moved the run), then the program.
    await a.append({ ...run, expectedSeq: 1, events: [{ type: "x.a" }] });
    await b.append({ ...run, expectedSeq: 2, events: [{ type: "x.b" }] });
    await refusedWithoutBlob(a, "stale cached head", { ...run, expectedSeq: 2 }, "conflict");
    // An id the session already holds (another run's event): the insert fails after the blob's.
    await a.append({ ...run, expectedSeq: 3, events: [{ type: "x.a" }] });
    await refusedWithoutBlob(
      a,
      "an id used elsewhere",
      { ...run, expectedSeq: 4 },
      "duplicate-event",
      started.events[0]?.eventId,
    );
    // A run B closed while A's cached head still says running.
    await b.append({ ...run, expectedSeq: 4, events: [{ type: "run.completed", payload: {} }] });
    await refusedWithoutBlob(
      a,
      "closed by another store",
      { ...run, expectedSeq: 4 },
      "run-closed",
    );
    await refusedWithoutBlob(a, "closed run", { ...run, expectedSeq: 5 }, "run-closed");
  } finally {
    await a.close();
    await b.close();
  }
}

await acrossStores(
  {
    topic: "append refused with blobs",
    test: "stores none of its blobs: conflict, stale cached head, duplicate id, closed run",
    label: "refused_blobs",
    kinds: ["sqlite", "postgres", "mysql", "redis"],
  },
  checkRefusedAppends,
);
