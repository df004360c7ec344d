import type { SqliteBackendState } from "./backend-state.js";
import type { Statement } from "./write-statements.js";

export interface ReadStatements {
  head: Statement;
  runs: Statement;
  sessions: Statement;
}

/**
 * Reads of heads, runs and sessions, which SQLite keeps in no counter row: each is the last
 * event of its run or session, found with max() on an index (one seek, whatever the length).
 */
export function readStatements(state: SqliteBackendState): ReadStatements {
  if (state.readStatements === undefined) {
    const database = state.database;
    state.readStatements = {
      head: database.prepare(
        `SELECT r.status AS status, r.closed_length AS closedLength, r.closed_hash AS closedHash,
             e.seq AS seq, e.body AS body FROM runs r
           LEFT JOIN events e ON e.session_id = r.session_id AND e.run_id = r.run_id
             AND e.seq = (SELECT max(seq) FROM events WHERE session_id = r.session_id AND run_id = r.run_id)
           WHERE r.session_id = ? AND r.run_id = ?`,
      ),
      // Every run row is listed, in the order of its run.started's cursor: a left join, where
      // an inner one hid a run whose run.started was deleted from verify, the one reader that
      // must see it. Such a run is placed by its first event left (the subquery, run for it
      // alone); a run with no event left comes last.
      runs: database.prepare(
        `SELECT r.run_id AS runId, r.status AS status, r.closed_length AS closedLength,
             r.closed_hash AS closedHash, r.parent_run_id AS parentRunId,
             r.started_at AS startedAt, e.seq AS seq, e.body AS body
           FROM runs r
           LEFT JOIN events f ON f.session_id = r.session_id AND f.run_id = r.run_id AND f.seq = 0
           LEFT JOIN events e ON e.session_id = r.session_id AND e.run_id = r.run_id
             AND e.seq = (SELECT max(seq) FROM events WHERE session_id = r.session_id AND run_id = r.run_id)
           WHERE r.session_id = ?
           ORDER BY coalesce(f.commit_cursor,
               (SELECT commit_cursor FROM events WHERE session_id = r.session_id AND run_id = r.run_id
                 ORDER BY seq LIMIT 1),
               9007199254740991), r.run_id`,
      ),
      sessions: database.prepare(
        `SELECT s.session_id AS sessionId, s.created_at AS createdAt,
             e.commit_cursor AS lastCursor, e.recorded_at AS updatedAt
           FROM sessions s
           JOIN events e ON e.session_id = s.session_id
             AND e.commit_cursor = (SELECT max(commit_cursor) FROM events WHERE session_id = s.session_id)
           WHERE s.session_id > ?
           ORDER BY s.session_id
           LIMIT ?`,
      ),
    };
  }
  return state.readStatements;
}
