import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NewEvent } from "../../events/types.js";
import { verifyRun } from "../../inspect/verify-run.js";
import { MemoryEventStore } from "../../store/memory-store.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { SqliteEventStore } from "./sqlite-store.js";
import { databaseAtMigration } from "./testing/older-database.js";

const folder = scratchDirectory("ledger-sqlite-heads-", { beforeAll, afterAll });
let count = 0;
const freshPath = () => join(folder, `heads-${++count}.db`);

const step = (index: number): NewEvent => ({
  type: "tool.completed",
  stepId: `step-${index}`,
  attemptId: `attempt-${index}`,
  payload: { toolCallId: `call-${index}`, result: "x".repeat(index * 300) },
});

/** Starts run `runId` of session "s". */
function started(store: SqliteEventStore, runId: string) {
  return store.append({ sessionId: "s", runId, expectedSeq: 0, events: [{ type: "run.started" }] });
}

/** Appends one event at the run's current head as `store` sees it. */
async function appendNext(store: SqliteEventStore, runId: string, index: number) {
  const head = await store.runHead({ sessionId: "s", runId });
  return store.append({ sessionId: "s", runId, expectedSeq: head.length, events: [step(index)] });
}

describe("SQLite heads without counter rows", () => {
  it("two connections taking turns on one run and session see each other's appends", async () => {
    const path = freshPath();
    const a = new SqliteEventStore({ path });
    const b = new SqliteEventStore({ path });
    await a.init();
    await started(a, "r");
    const cursors: number[] = [];
    for (let index = 1; index <= 6; index++) {
      // `a` continues where `b` left it: its remembered head is stale and must not be used.
      const writer = index % 2 === 0 ? a : b;
      const result = await writer.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: index,
        events: [step(index)],
      });
      cursors.push(result.events[0]?.commitCursor as number);
    }
    expect(cursors).toEqual([2, 3, 4, 5, 6, 7]);
    // A writer behind by one is refused, whichever connection wrote last.
    await expect(
      a.append({ sessionId: "s", runId: "r", expectedSeq: 6, events: [step(9)] }),
    ).rejects.toMatchObject({ code: "conflict", actualSeq: 7 });
    expect(await verifyRun(b, { sessionId: "s", runId: "r" })).toMatchObject({ ok: true });
    await a.close();
    await b.close();
  });

  it("two stores on one Database object share what they know", async () => {
    const database = new Database(freshPath());
    const a = new SqliteEventStore({ database });
    const b = new SqliteEventStore({ database });
    await a.init();
    await started(a, "r");
    await b.append({ sessionId: "s", runId: "r", expectedSeq: 1, events: [step(1)] });
    await started(a, "q");
    const result = await a.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 2,
      events: [step(2)],
    });
    expect(result.events[0]).toMatchObject({ seq: 2, commitCursor: 4 });
    expect(await verifyRun(a, { sessionId: "s", runId: "r" })).toMatchObject({ ok: true });
    database.close();
  });

  it("a rolled-back append leaves nothing remembered", async () => {
    const database = new Database(freshPath());
    const store = new SqliteEventStore({ database });
    await store.init();
    await started(store, "r");
    const first = await appendNext(store, "r", 1);
    // A second store on the same connection has no head of its own, so it takes the write
    // program: it reserves a cursor (remembered by the connection), then the insert fails on
    // the event-id index (an id already used) and the transaction rolls back.
    const other = new SqliteEventStore({ database });
    await expect(
      other.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 2,
        events: [{ ...step(2), eventId: first.events[0]?.eventId as string }],
      }),
    ).rejects.toMatchObject({ code: "duplicate-event" });
    // Had the rolled-back cursor been kept, this would be cursor 4 and leave a gap at 3.
    const next = await appendNext(store, "r", 3);
    expect(next.events[0]).toMatchObject({ seq: 2, commitCursor: 3 });
    expect(await store.runHead({ sessionId: "s", runId: "r" })).toMatchObject({
      length: 3,
      lastHash: next.events[0]?.hash,
    });
    database.close();
  });

  it("reads runs and sessions from their last events, the same as the reference store", async () => {
    const path = freshPath();
    const sqlite = new SqliteEventStore({ path });
    await sqlite.init();
    const memory = new MemoryEventStore();
    for (const store of [sqlite, memory]) {
      for (const sessionId of ["s1", "s2"]) {
        await store.append({
          sessionId,
          runId: "parent",
          expectedSeq: 0,
          events: [{ type: "run.started" }],
        });
        await store.append({
          sessionId,
          runId: "child",
          expectedSeq: 0,
          events: [{ type: "run.started", parentRunId: "parent" }, step(1)],
        });
        await store.append({
          sessionId,
          runId: "child",
          expectedSeq: 2,
          events: [{ type: "run.completed", payload: {} }],
        });
      }
    }
    // Ids and times differ between the two stores; each hash must be its own last event's.
    const strip = (runs: { startedAt: string; lastHash: string | null }[]) =>
      runs.map(({ startedAt: _, lastHash: __, ...run }) => run);
    const runs = await sqlite.listRuns("s1");
    expect(strip(runs)).toEqual(strip(await memory.listRuns("s1")));
    for (const run of runs) {
      const events = (await sqlite.readRun({ sessionId: "s1", runId: run.runId })).events;
      expect(run.lastHash).toBe(events.at(-1)?.hash);
    }
    const { lastHash, ...head } = await sqlite.runHead({ sessionId: "s2", runId: "child" });
    const { lastHash: _, ...reference } = await memory.runHead({ sessionId: "s2", runId: "child" });
    expect(head).toEqual(reference);
    expect(lastHash).toMatch(/^[0-9a-f]{64}$/);
    const sessions = (await sqlite.listSessions({ limit: 1 })).sessions;
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ sessionId: "s1", eventCount: 4 });
    const last = (await sqlite.readSession({ sessionId: "s1" })).events.at(-1);
    expect(sessions[0]?.updatedAt).toBe(last?.recordedAt);
    expect((await sqlite.listSessions({ after: "s1" })).sessions.map((s) => s.sessionId)).toEqual([
      "s2",
    ]);
    await sqlite.close();
  });

  it("upgrades a database that kept counter rows, and appends continue its chain", async () => {
    const path = freshPath();
    const raw = databaseAtMigration(path, 3);
    // Rows as the 0002 schema kept them, from events the reference store made.
    const memory = new MemoryEventStore();
    await memory.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }, step(1)],
    });
    const stored = (await memory.readRun({ sessionId: "s", runId: "r" })).events;
    const insert = raw.prepare(
      `INSERT INTO events (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (const event of stored)
      insert.run(
        "s",
        event.commitCursor,
        "r",
        event.seq,
        event.eventId,
        event.type,
        event.recordedAt,
        JSON.stringify(event),
      );
    const last = stored[1];
    raw
      .prepare(
        "INSERT INTO runs (session_id, run_id, run_length, status, last_hash, parent_run_id, started_at) VALUES ('s', 'r', 2, 'running', ?, NULL, 'then')",
      )
      .run(last?.hash);
    raw.prepare("INSERT INTO sessions VALUES ('s', 2, 'then', 'then')").run();
    // A closed run keeps its final head as the witness of its tail.
    raw
      .prepare(
        "INSERT INTO runs (session_id, run_id, run_length, status, last_hash, parent_run_id, started_at) VALUES ('s', 'done', 7, 'completed', 'h7', NULL, 'then')",
      )
      .run();
    raw.close();

    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await store.runHead({ sessionId: "s", runId: "r" })).toEqual({
      exists: true,
      length: 2,
      status: "running",
      lastHash: last?.hash,
    });
    const next = await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 2,
      events: [{ type: "run.completed", payload: {} }],
    });
    expect(next.events[0]).toMatchObject({ seq: 2, commitCursor: 3, prevHash: last?.hash });
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({ ok: true });
    expect((await store.listRuns("s"))[0]).toMatchObject({ length: 3, status: "completed" });
    expect(await store.runHead({ sessionId: "s", runId: "done" })).toMatchObject({
      length: 7,
      status: "completed",
      lastHash: "h7",
    });
    await store.close();
  });
});
