import Database from "better-sqlite3";
import mysql from "mysql2/promise";
import pg from "pg";
import { expect } from "vitest";
import { verifyRun } from "../../inspect/verify-run.js";
import type { EventStore } from "../../store/event-store.js";
import { acrossStores } from "./testing/across-stores.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";

// A run whose run.started row (seq 0) was deleted behind the store's back is still a run of
// its session: listRuns lists it (from its run row), so `agent-ledger verify`, which checks the
// runs listRuns names, reports it tampered at seq 0 instead of passing the session as intact.
// Redis is not here: its listRuns reads the session's list of runs, never their events.

/** Deletes event (runId, seq 0) of `sessionId` as someone with access to the database could. */
async function deleteFirstEvent(target: RacerTarget, sessionId: string, runId: string) {
  await deleteEvents(target, sessionId, runId, "seq = 0", 1);
}

/** Deletes the events of (sessionId, runId) that `condition` picks, `count` of them. */
async function deleteEvents(
  target: RacerTarget,
  sessionId: string,
  runId: string,
  condition: string,
  count: number,
) {
  const where = `session_id = ? AND run_id = ? AND ${condition}`;
  switch (target.kind) {
    case "sqlite": {
      const database = new Database(target.location);
      try {
        const result = database.prepare(`DELETE FROM events WHERE ${where}`).run(sessionId, runId);
        expect(result.changes).toBe(count);
      } finally {
        database.close();
      }
      return;
    }
    case "postgres": {
      const client = new pg.Client({ connectionString: target.location });
      await client.connect();
      try {
        const result = await client.query(
          `DELETE FROM "${target.schema}".events WHERE session_id = $1 AND run_id = $2 AND ${condition}`,
          [sessionId, runId],
        );
        expect(result.rowCount).toBe(count);
      } finally {
        await client.end();
      }
      return;
    }
    case "mysql": {
      const connection = await mysql.createConnection(target.location);
      try {
        const [result] = await connection.query(`DELETE FROM events WHERE ${where}`, [
          sessionId,
          runId,
        ]);
        expect((result as mysql.ResultSetHeader).affectedRows).toBe(count);
      } finally {
        await connection.end();
      }
      return;
    }
    default:
      throw new Error(`no raw delete for ${target.kind}`);
  }
}

async function record(store: EventStore, sessionId: string): Promise<void> {
  await store.append({
    sessionId,
    runId: "main",
    expectedSeq: 0,
    events: [{ type: "run.started" }, { type: "x.note", payload: { step: 1 } }],
  });
  await store.append({
    sessionId,
    runId: "sub-1",
    expectedSeq: 0,
    events: [{ type: "run.started", parentRunId: "main" }, { type: "run.completed" }],
  });
  await store.append({
    sessionId,
    runId: "main",
    expectedSeq: 2,
    events: [{ type: "run.completed" }],
  });
}

await acrossStores(
  {
    topic: "run without its first event",
    test: "listRuns still lists a run whose run.started row was deleted, and verifyRun fails it at seq 0",
    label: "nofirst",
    kinds: ["sqlite", "postgres", "mysql"],
  },
  async (target) => {
    const store = await openRacerStore(target);
    await store.init();
    try {
      await record(store, "s1");
      const before = await store.listRuns("s1");
      expect(before.map((run) => run.runId)).toEqual(["main", "sub-1"]);

      await deleteFirstEvent(target, "s1", "main");
      await deleteFirstEvent(target, "s1", "sub-1");
      // Listed as before, in the same order, with what its run row kept.
      expect(await store.listRuns("s1")).toEqual(before);
      for (const runId of ["main", "sub-1"]) {
        expect(await verifyRun(store, { sessionId: "s1", runId })).toMatchObject({
          ok: false,
          badSeq: 0,
        });
      }
      // A run with no event left is still listed, after the runs that have one.
      await deleteEvents(target, "s1", "main", "seq >= 0", 2);
      expect((await store.listRuns("s1")).map((run) => run.runId)).toEqual(["sub-1", "main"]);
    } finally {
      await store.close();
    }
  },
);
