import { type HeadRow, parseBody } from "../sql/rows.js";
import type { SqliteBackendState } from "./backend-state.js";
import { decodeBody } from "./body-codec.js";
import { readStatements } from "./read-statements.js";

/** A run's row with its last event (seq and stored body; null when the run has none). */
export interface RunWithLast {
  status: string;
  closedLength: number | null;
  closedHash: string | null;
  seq: number | null;
  body: unknown;
}

/**
 * A run's head: a closed run's is the one written into its row at close (so a tail deleted
 * later shows as a mismatch in `verifyRun`), an open run's is its last event's.
 */
export function headRow(row: RunWithLast, sessionId: string, runId: string): HeadRow {
  if (row.closedLength !== null)
    return { runLength: row.closedLength, status: row.status, lastHash: row.closedHash };
  if (row.seq === null) return { runLength: 0, status: row.status, lastHash: null };
  const place = () => ({ sessionId, runId, seq: row.seq as number });
  return {
    runLength: row.seq + 1,
    status: row.status,
    lastHash: parseBody(decodeBody(row.body, place), place).hash,
  };
}

/** A run's head from its row (status) and its last event (length, hash); undefined if absent. */
export function readHead(
  state: SqliteBackendState,
  sessionId: string,
  runId: string,
): HeadRow | undefined {
  const row = readStatements(state).head.get(sessionId, runId) as RunWithLast | undefined;
  return row === undefined ? undefined : headRow(row, sessionId, runId);
}
