import type Database from "better-sqlite3";
import type { SqliteBackendState } from "./backend-state.js";
import { epochMs } from "./sqlite-clock.js";

export type Statement = Database.Statement<unknown[], unknown>;

export interface Statements {
  dataVersion: Statement;
  findEvents: Statement;
  readRun: Statement;
  lastCursor: Statement;
  insertSession: Statement;
  insertEvent: Statement;
  insertHead: Statement;
  closeRun: Statement;
  indexRef: Statement;
  lockSession: Statement;
  openRuns: Statement;
  countRefs: Statement;
  collectSessionBlobs: Statement;
  deleteEvents: Statement;
  deleteRuns: Statement;
  deleteRefs: Statement;
  deleteSession: Statement;
  blobPage: Statement;
  collectBlobs: Statement;
  countCollectable: Statement;
  deleteBlobRefs: Statement;
}

/**
 * The blobs of a collectBlobs page (between two keys) that may go: put before the grace (its
 * parameters: after, last, grace ms) and named by no session that exists, except those whose
 * claims `claims` leaves out (a dry run's asIfDeleted, with parameters of its own after).
 */
const collectable = (claims = "") => `digest > ? AND digest <= ? AND touched_at <= ${epochMs} - ?
  AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.digest = blobs.digest${claims}
    AND EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = r.session_id))`;

/** The write statements, prepared on first use. */
export function writeStatements(state: SqliteBackendState): Statements {
  if (state.statements !== undefined) return state.statements;
  const database = state.database;
  state.statements = {
    dataVersion: database.prepare("PRAGMA data_version").pluck(),
    findEvents: database.prepare(
      "SELECT body FROM events WHERE session_id = ? AND event_id IN (SELECT value FROM json_each(?))",
    ),
    readRun: database.prepare(
      "SELECT body FROM events WHERE session_id = ? AND run_id = ? AND seq < ? ORDER BY seq",
    ),
    lastCursor: database
      .prepare("SELECT max(commit_cursor) FROM events WHERE session_id = ?")
      .pluck(),
    insertSession: database.prepare(
      "INSERT INTO sessions (session_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
    ),
    insertEvent: database.prepare(
      `INSERT INTO events (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertHead: database.prepare(
      `INSERT INTO runs (session_id, run_id, status, parent_run_id, started_at)
         VALUES (?, ?, ?, ?, ?)`,
    ),
    closeRun: database.prepare(
      "UPDATE runs SET status = ?, closed_length = ?, closed_hash = ? WHERE session_id = ? AND run_id = ?",
    ),
    indexRef: database.prepare(
      "INSERT INTO blob_refs (digest, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
    ),
    lockSession: database.prepare("SELECT 1 FROM sessions WHERE session_id = ?").pluck(),
    openRuns: database.prepare(
      "SELECT run_id AS runId FROM runs WHERE session_id = ? AND status = 'running'",
    ),
    countRefs: database.prepare("SELECT count(*) FROM blob_refs WHERE session_id = ?").pluck(),
    collectSessionBlobs: database.prepare(
      `DELETE FROM blobs WHERE digest IN (SELECT digest FROM blob_refs WHERE session_id = ?)
         AND touched_at <= ${epochMs} - ?
         AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.digest = blobs.digest AND r.session_id <> ?)`,
    ),
    deleteEvents: database.prepare("DELETE FROM events WHERE session_id = ?"),
    deleteRuns: database.prepare("DELETE FROM runs WHERE session_id = ?"),
    deleteRefs: database.prepare("DELETE FROM blob_refs WHERE session_id = ?"),
    deleteSession: database.prepare("DELETE FROM sessions WHERE session_id = ?"),
    blobPage: database.prepare(
      `SELECT count(*) AS examined, max(digest) AS last
         FROM (SELECT digest FROM blobs WHERE digest > ? ORDER BY digest LIMIT ?)`,
    ),
    collectBlobs: database
      .prepare(`DELETE FROM blobs WHERE ${collectable()} RETURNING digest`)
      .pluck(),
    // The dry run's count: the claims of the sessions in the JSON array (asIfDeleted) ignored.
    countCollectable: database.prepare(
      `SELECT count(*) AS blobs, coalesce(sum(length(content)), 0) AS bytes
         FROM blobs WHERE ${collectable(" AND r.session_id NOT IN (SELECT value FROM json_each(?))")}`,
    ),
    deleteBlobRefs: database.prepare("DELETE FROM blob_refs WHERE digest = ?"),
  };
  return state.statements;
}
