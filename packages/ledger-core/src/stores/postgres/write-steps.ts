import { eq, sql } from "drizzle-orm";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import {
  BLOB_BYTES_PER_STATEMENT,
  blobValues,
  chunked,
  type QueryDb,
  sharedStep,
} from "../sql/shared-queries.js";
import type { WriteStep } from "../sql/write-program.js";
import type { PostgresBackendState } from "./backend-state.js";
import { collectBlobPage, textRows } from "./collect-blob-page.js";
import { putStatement } from "./put-blobs.js";
import { serverEpochMs } from "./server-clock.js";

/** One step of a write program on the transaction `tx`: the shared queries, or PostgreSQL's own. */
export async function executeStep(
  state: PostgresBackendState,
  tx: NodePgDatabase,
  step: WriteStep,
): Promise<unknown> {
  const shared = sharedStep(tx as unknown as QueryDb, state.tables, step);
  if (shared !== undefined) return shared;
  const { events, runs, sessions, blobs, blobRefs } = state.tables;
  switch (step.kind) {
    case "put-blobs":
      for (const values of blobValues(step.blobs, BLOB_BYTES_PER_STATEMENT))
        await tx.execute(putStatement(state, values, true, undefined));
      return undefined;
    case "index-refs":
      for (const refs of chunked(step.refs))
        await tx
          .insert(blobRefs)
          .values(refs.map((blobRef) => ({ blobRef, sessionId: step.sessionId })))
          .onConflictDoNothing();
      return undefined;
    case "collect-session-blobs": {
      // The session's refs, read and counted on the server, and the blobs among them that no
      // other session names (the session's own index rows go with its other rows, in
      // delete-session). Locked in ref order first, as appends and puts upsert them, then
      // deleted by a statement of their own, whose snapshot sees the claims of every writer
      // that held one of the rows (see collectBlobPage, collect-blob-page.ts).
      const unclaimed = sql`${blobs.touchedAt} <= ${serverEpochMs} - ${step.graceMs}
    AND NOT EXISTS (SELECT 1 FROM ${blobRefs} r
      WHERE r.blob_ref = ${blobs.blobRef} AND r.session_id <> ${step.sessionId})`;
      const locked = await tx.execute<{ refs: string; locked: string[] }>(sql`WITH mine AS (
  SELECT blob_ref FROM ${blobRefs} WHERE session_id = ${step.sessionId}
), doomed AS (
  SELECT ${blobs.blobRef} AS blob_ref FROM ${blobs}
  WHERE ${blobs.blobRef} IN (SELECT blob_ref FROM mine) AND ${unclaimed}
  ORDER BY ${blobs.blobRef} FOR UPDATE
)
SELECT (SELECT count(*) FROM mine) AS refs, array(SELECT blob_ref FROM doomed) AS locked`);
      const refs = Number(locked.rows[0]?.refs ?? 0);
      const doomed = locked.rows[0]?.locked ?? [];
      if (doomed.length === 0) return { refs, deleted: 0 };
      const gone = await tx.execute(
        sql`DELETE FROM ${blobs} WHERE ${blobs.blobRef} IN ${textRows(doomed)} AND ${unclaimed}`,
      );
      return { refs, deleted: gone.rowCount ?? 0 };
    }
    case "collect-blobs":
      return collectBlobPage(state, tx, step);
    case "delete-session": {
      // Counted by the server (rowCount), not returned row by row.
      const deletedEvents = await tx.delete(events).where(eq(events.sessionId, step.sessionId));
      const deletedRuns = await tx.delete(runs).where(eq(runs.sessionId, step.sessionId));
      await tx.delete(blobRefs).where(eq(blobRefs.sessionId, step.sessionId));
      await tx.delete(sessions).where(eq(sessions.sessionId, step.sessionId));
      return { events: deletedEvents.rowCount ?? 0, runs: deletedRuns.rowCount ?? 0 };
    }
    case "reserve-cursors": {
      const rows = await tx
        .insert(sessions)
        .values({
          sessionId: step.sessionId,
          lastCursor: step.count,
          createdAt: step.now,
          updatedAt: step.now,
        })
        .onConflictDoUpdate({
          target: sessions.sessionId,
          set: {
            lastCursor: sql`${sessions.lastCursor} + ${step.count}`,
            updatedAt: step.now,
          },
        })
        .returning({ lastCursor: sessions.lastCursor });
      return Number(rows[0]?.lastCursor);
    }
    default:
      throw new Error(`no query for the write step ${step.kind}`);
  }
}
