import { type SQL, sql } from "drizzle-orm";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import type { BlobPage, WriteStep } from "../sql/write-program.js";
import type { PostgresBackendState } from "./backend-state.js";
import { serverEpochMs } from "./server-clock.js";

/**
 * A page of collectBlobs in two statements. The first: `page` reads the next `limit` keys (the
 * primary key, in order), `doomed` locks those past the grace that no existing session
 * references, in key order, and only counts, the last key and the locked refs come back. The
 * second (skipped when nothing was locked) deletes, of the rows locked, those it still finds
 * past the grace and unclaimed, and their index rows.
 *
 * Why the locks come first, in key order: an append or a put that stores blobs upserts
 * their rows in ref order (blobRows sorts them), each row locked until its commit. A DELETE
 * takes the rows in whatever order its plan visits them (a hash join over the table visits
 * them as they lie in it), so it could hold a later blob's row and wait for an earlier one
 * that an append holds while the append waits for the later: a deadlock, which PostgreSQL
 * finds only after deadlock_timeout (1 s by default) and ends by rolling one back (the store
 * runs it again). A locking SELECT sorts before it locks (its LockRows node sits above the
 * Sort), so both sides queue in one order and one simply waits for the other; the DELETE
 * then finds every row it deletes already locked. deleteSession's collect-session-blobs does
 * the same. (collect-lock-order.int.test.ts makes the interleaving happen.)
 *
 * Why the delete is a statement of its own: under READ COMMITTED a statement reads one
 * snapshot, taken as it starts, and a locking read that waited for a row checks it again in
 * its newest committed version (EvalPlanQual) but the other tables still in that snapshot.
 * An append that held the row as the first statement started commits its claim and its
 * session after that snapshot: judged there, its blob looked unclaimed, and its touched_at,
 * stamped as its upsert began, before it waited for the row, could be past the grace by the
 * time the lock was granted; one statement deleted the blob of a committed append. The second
 * statement's snapshot is taken with every row locked: each writer that upserted one has
 * committed (its claims are seen) and every later one waits for this commit, after which its
 * upsert finds no row and inserts the blob again (ON CONFLICT sees no conflict with a deleted
 * row). An append's index row and session row committed before that snapshot are seen by NOT
 * EXISTS; one committing later belongs to a writer that stores its blobs with that append (and
 * waits), or put them within the grace period right before it. Data-modifying CTEs share that
 * snapshot, so `refs` deletes the index rows `gone` judged, all of sessions gone in it, and
 * never one inserted since.
 */
export async function collectBlobPage(
  state: PostgresBackendState,
  tx: NodePgDatabase,
  step: Extract<WriteStep, { kind: "collect-blobs" }>,
): Promise<BlobPage> {
  const { blobs, blobRefs, sessions } = state.tables;
  const after = step.after === undefined ? sql`true` : sql`${blobs.blobRef} > ${step.after}`;
  const page = sql`page AS (
  SELECT ${blobs.blobRef} AS blob_ref FROM ${blobs} WHERE ${after}
  ORDER BY ${blobs.blobRef} LIMIT ${step.limit}
)`;
  // A dry run's sessions counted as deleted (asIfDeleted): their claims are not looked at.
  const ignored =
    step.asIfDeleted.length === 0
      ? sql``
      : sql` AND r.session_id NOT IN ${textRows(step.asIfDeleted)}`;
  const unclaimed = sql`${blobs.touchedAt} <= ${serverEpochMs} - ${step.graceMs}
    AND NOT EXISTS (SELECT 1 FROM ${blobRefs} r WHERE r.blob_ref = ${blobs.blobRef}${ignored}
      AND EXISTS (SELECT 1 FROM ${sessions} s WHERE s.session_id = r.session_id))`;
  const collectable = sql`${blobs.blobRef} IN (SELECT blob_ref FROM page) AND ${unclaimed}`;
  const pageBounds = sql`(SELECT count(*) FROM page) AS examined, (SELECT max(blob_ref) FROM page) AS last`;
  if (step.dryRun) {
    // A dry run reads the same blobs without locking them: nothing waits on it.
    const result = await tx.execute<{
      examined: string;
      last: string | null;
      deleted: string;
      bytes: string;
    }>(sql`WITH ${page}
SELECT ${pageBounds}, count(*) AS deleted, coalesce(sum(octet_length(${blobs.content})), 0) AS bytes
FROM ${blobs} WHERE ${collectable}`);
    const row = result.rows[0];
    return {
      examined: Number(row?.examined ?? 0),
      last: row?.last ?? undefined,
      deleted: Number(row?.deleted ?? 0),
      bytes: Number(row?.bytes ?? 0),
    };
  }
  const locking = await tx.execute<{ examined: string; last: string | null; locked: string[] }>(
    sql`WITH ${page}, doomed AS (
  SELECT ${blobs.blobRef} AS blob_ref FROM ${blobs} WHERE ${collectable}
  ORDER BY ${blobs.blobRef} FOR UPDATE
)
SELECT ${pageBounds}, array(SELECT blob_ref FROM doomed) AS locked`,
  );
  const row = locking.rows[0];
  const doomed = row?.locked ?? [];
  const bounds = { examined: Number(row?.examined ?? 0), last: row?.last ?? undefined };
  if (doomed.length === 0) return { ...bounds, deleted: 0, bytes: 0 };
  const result = await tx.execute<{ deleted: string }>(sql`WITH gone AS (
  DELETE FROM ${blobs} WHERE ${blobs.blobRef} IN ${textRows(doomed)} AND ${unclaimed}
  RETURNING ${blobs.blobRef} AS blob_ref
), refs AS (
  DELETE FROM ${blobRefs} WHERE ${blobRefs.blobRef} IN (SELECT blob_ref FROM gone)
)
SELECT count(*) AS deleted FROM gone`);
  return { ...bounds, deleted: Number(result.rows[0]?.deleted ?? 0), bytes: 0 };
}

/** `values` as a subquery of text rows, in one parameter whatever their number. */
export function textRows(values: readonly string[]): SQL {
  return sql`(SELECT jsonb_array_elements_text(${JSON.stringify(values)}::jsonb))`;
}
