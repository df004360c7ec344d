import { and, asc, eq, gt, inArray, lte, sql } from "drizzle-orm";
import { chunked, type QueryDb, ROWS_PER_STATEMENT, sharedStep } from "../sql/shared-queries.js";
import type { WriteStep } from "../sql/write-program.js";
import type { Db, MysqlBackendState } from "./backend-state.js";
import { collectBlobPage } from "./collect-blob-page.js";
import { assertRowsFit, blobChunks, bodyCharsPerStatement } from "./packet-limits.js";
import { serverEpochMs } from "./server-clock.js";

/** One step of a write program on the transaction `tx`: the shared queries, or MySQL's own. */
export async function executeStep(
  state: MysqlBackendState,
  tx: Db,
  step: WriteStep,
  maxPacket: number,
): Promise<unknown> {
  if (step.kind === "insert-events") assertRowsFit(step.rows, maxPacket);
  const shared = sharedStep(
    tx as unknown as QueryDb,
    state.tables,
    step,
    bodyCharsPerStatement(maxPacket),
  );
  if (shared !== undefined) return shared;
  const { events, runs, sessions, blobs, blobRefs } = state.tables;
  switch (step.kind) {
    case "put-blobs":
      for (const values of blobChunks(step.blobs, maxPacket)) {
        // The stored rows locked first, in ref order, by a statement of their own: the
        // INSERT's clock is read as it begins, after these waits (see blobsStatement).
        await tx
          .select({ ref: blobs.blobRef })
          .from(blobs)
          .where(
            inArray(
              blobs.blobRef,
              values.map((row) => row.blobRef),
            ),
          )
          .orderBy(blobs.blobRef)
          .for("update");
        await tx
          .insert(blobs)
          .values(values.map((row) => ({ ...row, touchedAt: serverEpochMs })))
          .onDuplicateKeyUpdate({ set: { touchedAt: serverEpochMs } });
      }
      return undefined;
    case "index-refs":
      for (const refs of chunked(step.refs))
        await tx
          .insert(blobRefs)
          .ignore()
          .values(refs.map((blobRef) => ({ blobRef, sessionId: step.sessionId })));
      return undefined;
    case "collect-session-blobs": {
      // The session's refs a page at a time, in key order (one pass over the index), each
      // page's unshared blobs deleted by key: only refs come back, never more than a page.
      // (A multi-table DELETE would need none, but fails with "No database selected" on a
      // connection without a default database, and a DELETE ... IN (subquery) scans every
      // blob on servers that do not turn it into a join.)
      const { sessionId, graceMs } = step;
      let refs = 0;
      let deleted = 0;
      let after = "";
      for (;;) {
        const page = await tx
          .select({ ref: blobRefs.blobRef })
          .from(blobRefs)
          .where(and(eq(blobRefs.sessionId, sessionId), gt(blobRefs.blobRef, after)))
          .orderBy(asc(blobRefs.blobRef))
          .limit(ROWS_PER_STATEMENT);
        const chunk = page.map((row) => String(row.ref));
        if (chunk.length === 0) break;
        refs += chunk.length;
        after = chunk[chunk.length - 1] as string;
        const [result] = await tx
          .delete(blobs)
          .where(
            and(
              inArray(blobs.blobRef, chunk),
              lte(blobs.touchedAt, sql`${serverEpochMs} - ${graceMs}`),
              sql`not exists (select 1 from ${blobRefs} r where r.blob_ref = ${blobs.blobRef} and r.session_id <> ${sessionId})`,
            ),
          );
        deleted += result.affectedRows;
        if (chunk.length < ROWS_PER_STATEMENT) break;
      }
      return { refs, deleted };
    }
    case "collect-blobs":
      return collectBlobPage(state, tx, step);
    case "delete-session": {
      const [deletedEvents] = await tx.delete(events).where(eq(events.sessionId, step.sessionId));
      const [deletedRuns] = await tx.delete(runs).where(eq(runs.sessionId, step.sessionId));
      await tx.delete(blobRefs).where(eq(blobRefs.sessionId, step.sessionId));
      await tx.delete(sessions).where(eq(sessions.sessionId, step.sessionId));
      return { events: deletedEvents.affectedRows, runs: deletedRuns.affectedRows };
    }
    case "reserve-cursors": {
      await tx
        .insert(sessions)
        .values({
          sessionId: step.sessionId,
          lastCursor: step.count,
          createdAt: step.now,
          updatedAt: step.now,
        })
        .onDuplicateKeyUpdate({
          set: {
            lastCursor: sql`${sessions.lastCursor} + ${step.count}`,
            updatedAt: step.now,
          },
        });
      // The row is locked by this transaction: the read sees our own update.
      const rows = await tx
        .select({ lastCursor: sessions.lastCursor })
        .from(sessions)
        .where(eq(sessions.sessionId, step.sessionId));
      return Number(rows[0]?.lastCursor);
    }
    default:
      throw new Error(`no query for the write step ${step.kind}`);
  }
}
