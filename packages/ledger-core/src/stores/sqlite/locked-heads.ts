import type { HeadRow } from "../sql/rows.js";
import type { SqliteBackendState } from "./backend-state.js";
import { readHead } from "./head-row.js";
import type { Statements } from "./write-statements.js";

/** Inside a write transaction: the run's head, as remembered or read (then remembered). */
export function lockedHead(
  state: SqliteBackendState,
  sessionId: string,
  runId: string,
): HeadRow | undefined {
  const remembered = state.heads.head(sessionId, runId);
  if (remembered !== undefined) return remembered;
  const head = readHead(state, sessionId, runId);
  if (head !== undefined) state.heads.rememberHead(sessionId, runId, head);
  return head;
}

/** Inside a write transaction: the session's largest cursor (0 for a new session). */
export function lastCursor(
  state: SqliteBackendState,
  sessionId: string,
  statements: Statements,
): number {
  return (
    state.heads.cursor(sessionId) ?? (statements.lastCursor.get(sessionId) as number | null) ?? 0
  );
}

/**
 * Inside a write transaction, after the batch's rows: the run's new head. Only a closing run
 * writes it into its row (an open run's head is its last event's, see schema.ts).
 */
export function moveHead(
  state: SqliteBackendState,
  sessionId: string,
  runId: string,
  head: { length: number; status: string; lastHash: string | null },
  statements: Statements,
): void {
  if (head.status !== "running")
    statements.closeRun.run(head.status, head.length, head.lastHash, sessionId, runId);
  state.heads.rememberHead(sessionId, runId, {
    runLength: head.length,
    status: head.status,
    lastHash: head.lastHash,
  });
}
