import assert from "node:assert/strict";
import { uuidv7 } from "../events/ids.js";
import type { NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";

function batch(from: number, count: number): NewEvent[] {
  return Array.from({ length: count }, (_, index) => ({
    eventId: `e${from + index}`,
    type: "x.step",
    payload: { index: from + index },
  }));
}

/**
 * One append of `count` events, as an agent that buffered a long stretch of work writes it, on
 * a fresh session of an inited store: to a new run (the transactional path) and to a run the
 * store just wrote (the one-round-trip path of the SQL stores). Each is stored whole, in
 * order, with gap-free cursors; its exact retry is deduplicated and writes nothing; a fork
 * copies the whole run.
 */
export async function checkLargeBatch(store: EventStore, count: number): Promise<void> {
  const sessionId = `large-${uuidv7()}`;
  const fresh = await store.append({
    sessionId,
    runId: "new",
    expectedSeq: 0,
    events: batch(0, count),
  });
  assert.equal(fresh.events.length, count);
  assert.equal((await store.runHead({ sessionId, runId: "new" })).length, count);

  await store.append({ sessionId, runId: "cached", expectedSeq: 0, events: batch(count, 1) });
  const request = { sessionId, runId: "cached", expectedSeq: 1, events: batch(count + 1, count) };
  const written = await store.append(request);
  assert.equal(written.events.length, count);
  assert.equal(written.events[count - 1]?.commitCursor, 2 * count + 1);
  const retried = await store.append(request);
  assert.equal(retried.deduplicated, true);
  assert.deepEqual(retried.events, written.events);
  assert.equal((await store.runHead({ sessionId, runId: "cached" })).length, count + 1);

  const tail = await store.readSession({ sessionId, after: 2 * count - 1 });
  assert.deepEqual(
    tail.events.map((event) => event.eventId),
    [`e${2 * count - 1}`, `e${2 * count}`],
  );

  const fork = await store.fork({ sessionId, runId: "new", newRunId: "copy", uptoSeq: count });
  assert.equal(fork.events.length, count);
  assert.equal((await store.runHead({ sessionId, runId: "copy" })).length, count);
  assert.equal(fork.events[count - 1]?.commitCursor, 3 * count + 1);
}
