import { expect } from "vitest";
import { sha256Hex } from "../../../events/canonical.js";
import { uuidv7 } from "../../../events/ids.js";
import type { AppendRequest, EventStore } from "../../../store/event-store.js";

/** The content of the blob the fault tests' batch carries, by session. */
function faultBlob(sessionId: string): string {
  return `kept in a blob by ${sessionId}`;
}

function faultBlobRef(sessionId: string): string {
  return `sha256:${sha256Hex(faultBlob(sessionId))}`;
}

/**
 * The fault tests' run (PostgreSQL, MySQL): a new session whose run holds `run.started`, and
 * the two-event batch each test appends at seq 1 while it drops the connection. The batch
 * carries a blob its first event names, as a recorded call that keeps content in blobs does.
 */
export async function startFaultRun(
  store: EventStore,
): Promise<{ sessionId: string; batch: AppendRequest }> {
  const sessionId = `fault-${uuidv7()}`;
  await store.append({ sessionId, runId: "r", expectedSeq: 0, events: [{ type: "run.started" }] });
  const batch: AppendRequest = {
    sessionId,
    runId: "r",
    expectedSeq: 1,
    events: [
      {
        eventId: "fault-1",
        type: "model.requested",
        payload: { n: 1 },
        evidenceRefs: [faultBlobRef(sessionId)],
      },
      { eventId: "fault-2", type: "model.completed", payload: { n: 2 } },
    ],
    blobs: [faultBlob(sessionId)],
  };
  return { sessionId, batch };
}

/**
 * After the append of `batch` failed with its connection dropped: the batch is wholly absent,
 * its blob too; its retry writes both once and a second retry is deduplicated; the store (its
 * pool) keeps appending, with cursors gap-free.
 */
export async function expectAbsentThenRetried(
  store: EventStore,
  sessionId: string,
  batch: AppendRequest,
): Promise<void> {
  expect((await store.runHead({ sessionId, runId: "r" })).length).toBe(1);
  expect((await store.readSession({ sessionId })).events).toHaveLength(1);
  await expect(store.getBlob(faultBlobRef(sessionId))).rejects.toMatchObject({
    code: "not-found",
  });
  const retried = await store.append(batch);
  expect(new TextDecoder().decode(await store.getBlob(faultBlobRef(sessionId)))).toBe(
    faultBlob(sessionId),
  );
  expect(retried.deduplicated).toBe(false);
  expect(retried.events.map((event) => event.commitCursor)).toEqual([2, 3]);
  const again = await store.append(batch);
  expect(again.deduplicated).toBe(true);
  expect(again.events).toEqual(retried.events);
  for (let index = 0; index < 12; index++) {
    await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 3 + index,
      events: [{ type: "x.after", payload: index }],
    });
  }
  expect(
    (await store.readSession({ sessionId })).events.map((event) => event.commitCursor),
  ).toEqual(Array.from({ length: 15 }, (_, index) => index + 1));
}
