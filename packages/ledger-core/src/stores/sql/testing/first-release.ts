import { expect } from "vitest";
import type { LedgerEvent } from "../../../events/types.js";
import { inspectSession } from "../../../inspect/inspect-session.js";
import { verifyRun } from "../../../inspect/verify-run.js";
import { SessionRecorder } from "../../../recorder/session-recorder.js";
import { blobRef } from "../../../store/blob.js";
import type { EventStore } from "../../../store/event-store.js";
import { MemoryEventStore } from "../../../store/memory-store.js";
import type { RunRow, SessionRow } from "../rows.js";
import { runRacer } from "./race-check.js";
import { openRacerStore, type RacerTarget } from "./racer-store.js";

/**
 * A ledger as the first release (schema 0000, no blob reference index) left it in its tables:
 * event bodies as JSON text, counter rows for runs and sessions, blobs as raw bytes keyed by
 * their text reference. Session "old" holds a closed run, an open run with a tool call in
 * flight, and a fork of the closed run; its model call names a blob that a later session
 * names too.
 */
export interface FirstReleaseLedger {
  events: LedgerEvent[];
  runs: (RunRow & { sessionId: string })[];
  sessions: SessionRow[];
  blob: { ref: string; content: Buffer };
}

export async function firstReleaseLedger(): Promise<FirstReleaseLedger> {
  const content = Buffer.from("evidence the old session and a new one both name");
  const ref = blobRef(content);
  const memory = new MemoryEventStore();
  const sessionId = "old";
  await memory.append({
    sessionId,
    runId: "done",
    expectedSeq: 0,
    events: [
      { type: "run.started" },
      {
        type: "model.requested",
        stepId: "s1",
        attemptId: "a1",
        payload: { request: { messages: [] } },
        evidenceRefs: [ref],
      },
      { type: "model.completed", stepId: "s1", attemptId: "a1", payload: { response: "hi" } },
      { type: "run.completed", payload: {} },
    ],
  });
  await memory.append({
    sessionId,
    runId: "open",
    expectedSeq: 0,
    events: [
      { type: "run.started" },
      {
        type: "tool.requested",
        stepId: "s1",
        attemptId: "t1",
        payload: { toolCallId: "call-1", name: "send", args: { to: "x" } },
      },
    ],
  });
  await memory.fork({ sessionId, runId: "done", newRunId: "forked", uptoSeq: 2 });
  const events = (await memory.readSession({ sessionId })).events;
  const runs = (await memory.listRuns(sessionId)).map((run) => {
    const own = events.filter((event) => event.runId === run.runId);
    const last = own[own.length - 1];
    return {
      sessionId,
      runId: run.runId,
      runLength: own.length,
      status: run.status,
      lastHash: last?.hash ?? null,
      parentRunId: own[0]?.parentRunId ?? null,
      startedAt: own[0]?.recordedAt ?? "",
    };
  });
  const last = events[events.length - 1];
  const sessions = [
    {
      sessionId,
      lastCursor: last?.commitCursor ?? 0,
      createdAt: events[0]?.recordedAt ?? "",
      updatedAt: last?.recordedAt ?? "",
    },
  ];
  return { events, runs, sessions, blob: { ref, content } };
}

/**
 * What an upgraded store must show of that ledger: every event as written, every chain
 * verifying, the blob found, the open runs appendable and resumable, and the blob kept when
 * a later session that names it is deleted (the old events still name it).
 */
export async function checkFirstReleaseUpgraded(
  store: EventStore,
  ledger: FirstReleaseLedger,
): Promise<void> {
  expect((await store.readSession({ sessionId: "old" })).events).toEqual(ledger.events);
  for (const run of ledger.runs)
    expect(await verifyRun(store, { sessionId: "old", runId: run.runId })).toMatchObject({
      ok: true,
    });
  expect(Buffer.from(await store.getBlob(ledger.blob.ref))).toEqual(ledger.blob.content);
  const inspected = await inspectSession(store, "old");
  // The open run's tool call, and the model call the fork copied without its answer.
  expect(
    inspected.unresolved.map((attempt) => `${attempt.runId}/${attempt.attemptId}`).sort(),
  ).toEqual(["forked/a1", "open/t1"]);

  const resumed = await SessionRecorder.resume({
    store,
    sessionId: "old",
    runId: "open",
    actor: { type: "agent", id: "upgraded" },
  });
  await resumed.cancelRun("upgraded");
  const forked = await store.runHead({ sessionId: "old", runId: "forked" });
  await store.append({
    sessionId: "old",
    runId: "forked",
    expectedSeq: forked.length,
    events: [{ type: "run.completed", payload: {} }],
  });
  for (const runId of ["open", "forked"])
    expect(await verifyRun(store, { sessionId: "old", runId })).toMatchObject({ ok: true });

  await store.append({
    sessionId: "new",
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started", evidenceRefs: [ledger.blob.ref] }, { type: "run.completed" }],
  });
  expect(await store.deleteSession("new", { blobGraceMs: 0 })).toMatchObject({
    deletedEvents: 2,
    deletedBlobs: 0,
    keptBlobs: 1,
  });
  expect(Buffer.from(await store.getBlob(ledger.blob.ref))).toEqual(ledger.blob.content);
}

/**
 * 8 processes start at once on the first release's database (each init()s, then appends two
 * events to a run of its own in session "race"): none fails, and the ledger they leave is
 * whole (`checkFirstReleaseUpgraded` on a store opened after them).
 */
export async function checkFirstReleaseRace(
  target: RacerTarget,
  ledger: FirstReleaseLedger,
): Promise<void> {
  await Promise.all(
    Array.from({ length: 8 }, (_, writer) =>
      runRacer({ target, sessionId: "race", runId: `run-${writer}`, writer, count: 2 }),
    ),
  );
  const store = await openRacerStore(target);
  try {
    await store.init();
    const raced = (await store.readSession({ sessionId: "race" })).events;
    expect(raced.map((event) => event.commitCursor)).toEqual(
      Array.from({ length: 16 }, (_, index) => index + 1),
    );
    await checkFirstReleaseUpgraded(store, ledger);
  } finally {
    await store.close();
  }
}
