import { and, type Column, inArray, lte, type SQL, sql } from "drizzle-orm";
import type { BlobPage, WriteStep } from "../sql/write-program.js";
import type { Db, MysqlBackendState, Tables } from "./backend-state.js";
import { serverEpochMs } from "./server-clock.js";

/**
 * The claims of sessions that still exist (with their `sessions` row), as `r`: a blob's index
 * rows (their primary key's prefix), then each one's session by its key. STRAIGHT_JOIN keeps
 * that order: MariaDB 10.11, misled by its estimate of rows per blob, read the whole
 * `sessions` key for every blob of a page instead (a pass over 20,000 blobs named by 2,000
 * sessions took 25 s, against 0.4 s in this order).
 */
function liveClaims({ blobRefs, sessions }: Tables): SQL {
  return sql`${blobRefs} r STRAIGHT_JOIN ${sessions} s ON s.session_id = r.session_id`;
}

/** Whether a session that still exists names the blob `ref` (liveClaims). */
function claimedByLiveSession(tables: Tables, ref: SQL | Column): SQL {
  return sql`EXISTS (SELECT 1 FROM ${liveClaims(tables)} WHERE r.blob_ref = ${ref})`;
}

/**
 * A page of collectBlobs: one SELECT reads the page (the next `limit` keys of the primary
 * key) and answers its size, its last key and the blobs that look collectable, with whether
 * the index names them; only when some do, a DELETE by key removes them, checking every
 * condition again; only when those had index rows, a DELETE of the rows of sessions that
 * are gone, for the blobs no longer stored. Deletes by key, as collect-session-blobs: a
 * multi-table DELETE fails on a connection without a default database, and DELETE ... IN
 * (subquery) scans every blob on servers that do not make it a join.
 *
 * Why it never deadlocks with an append or a put of the same blobs: those upsert the rows in
 * ref order (blobRows sorts them, a compound block across all its appends), and this DELETE
 * (like collect-session-blobs') names its rows by primary key, which InnoDB reads as ranges of
 * the key in ascending order, locking each row as it reaches it; `sha256:<hex>` refs sort the
 * same in any collation. Both sides queue for the rows in one order, so one waits for the
 * other. (collect-lock-order.int.test.ts makes the interleaving that deadlocked PostgreSQL's
 * DELETE, whose plan chose the order, and counts the server's deadlock reports: none.)
 *
 * Why READ COMMITTED suffices on InnoDB: the SELECT is a consistent read and locks nothing;
 * the DELETE locks each candidate row and reads its newest committed version, so a put that
 * committed first (its upsert refreshes touched_at) keeps the blob, a put still running
 * holds the row until then (and the DELETE sees its touched_at), and one that comes after
 * the DELETE waits for its commit and inserts the blob again. The references are read as
 * committed when the DELETE runs: an append committed by then keeps its blobs; one
 * committing later belongs to a writer that put its blobs within the grace period. The
 * index rows deleted are those of blobs no longer stored and of sessions without their row:
 * an index row that a put or an append adds meanwhile for a live session stays.
 * A dry run stops after the SELECT and counts its candidates: it deletes and locks nothing
 * (with asIfDeleted, after one more SELECT of the candidates' claims: unclaimedBut).
 */
export async function collectBlobPage(
  state: MysqlBackendState,
  tx: Db,
  step: Extract<WriteStep, { kind: "collect-blobs" }>,
): Promise<BlobPage> {
  const { blobs, blobRefs, sessions } = state.tables;
  const ignoring = step.asIfDeleted;
  const page = await blobPage(state, tx, step, ignoring.length === 0);
  if (page.candidates.length === 0) return { ...page.bounds, deleted: 0, bytes: 0 };
  if (step.dryRun) {
    const doomed =
      ignoring.length === 0 ? page.candidates : await unclaimedBut(state, tx, page, ignoring);
    return { ...page.bounds, ...(await storedBytes(state, tx, doomed)) };
  }
  const [gone] = await tx.delete(blobs).where(
    and(
      inArray(
        blobs.blobRef,
        page.candidates.map((candidate) => candidate.ref),
      ),
      lte(blobs.touchedAt, sql`${serverEpochMs} - ${step.graceMs}`),
      sql`NOT ${claimedByLiveSession(state.tables, blobs.blobRef)}`,
    ),
  );
  const claimed = page.candidates.filter((candidate) => candidate.claimed);
  if (gone.affectedRows > 0 && claimed.length > 0)
    await tx.delete(blobRefs).where(
      and(
        inArray(
          blobRefs.blobRef,
          claimed.map((candidate) => candidate.ref),
        ),
        sql`NOT EXISTS (SELECT 1 FROM ${blobs} b WHERE b.blob_ref = ${blobRefs.blobRef})`,
        sql`NOT EXISTS (SELECT 1 FROM ${sessions} s WHERE s.session_id = ${blobRefs.sessionId})`,
      ),
    );
  return { ...page.bounds, deleted: gone.affectedRows, bytes: 0 };
}

/**
 * Of a dry run's blobs past the grace (`page.candidates`), those that no existing session
 * claims but the sessions `ignoring` (asIfDeleted): the claims of existing sessions are read
 * and filtered here. In SQL the ids were a JSON array, which MariaDB 10.11 read again for every
 * claim (JSON_CONTAINS; a JSON_TABLE under NOT IN, or joined without a key): a count over
 * 10,000 blobs of 5,000 such sessions took 1.6-4.7 s, against 0.06 s with none. Ids are
 * compared as the hex of their UTF-8 bytes, as session_id holds them, whatever the
 * application's pool makes of binary columns.
 */
async function unclaimedBut(
  { tables }: MysqlBackendState,
  tx: Db,
  page: { candidates: { ref: string; claimed: boolean }[] },
  ignoring: string[],
): Promise<{ ref: string }[]> {
  const claimed = page.candidates.filter((candidate) => candidate.claimed);
  if (claimed.length === 0) return page.candidates;
  const ignored = new Set(ignoring.map((id) => Buffer.from(id, "utf8").toString("hex")));
  const claims = await tx
    .select({
      ref: sql<string>`r.blob_ref`.mapWith(String),
      session: sql<string>`lower(hex(r.session_id))`.mapWith(String),
    })
    .from(liveClaims(tables))
    .where(
      inArray(
        sql`r.blob_ref`,
        claimed.map((candidate) => candidate.ref),
      ),
    );
  const kept = new Set(
    claims.filter((claim) => !ignored.has(claim.session)).map((claim) => claim.ref),
  );
  return page.candidates.filter((candidate) => !kept.has(candidate.ref));
}

/**
 * A dry run's count of the page's collectable blobs, as the consistent read found them, and the
 * bytes stored for them (read by key, a few hundred at most: no content comes back).
 */
async function storedBytes(
  state: MysqlBackendState,
  tx: Db,
  candidates: { ref: string }[],
): Promise<{ deleted: number; bytes: number }> {
  const { blobs } = state.tables;
  const [row] = await tx
    .select({
      deleted: sql<number>`count(*)`.mapWith(Number),
      bytes: sql<number>`coalesce(sum(octet_length(${blobs.content})), 0)`.mapWith(Number),
    })
    .from(blobs)
    .where(
      inArray(
        blobs.blobRef,
        candidates.map((candidate) => candidate.ref),
      ),
    );
  return { deleted: row?.deleted ?? 0, bytes: row?.bytes ?? 0 };
}

/**
 * The page's size and last key, and its blobs that look collectable (`claimed`: the index
 * names them, for sessions that are gone), in one consistent read. Only those blobs and the
 * last one come back, not the whole page: the page is read twice on the server instead
 * (`p` for the blobs, `q` for the bounds), a few hundred entries of the primary key each.
 */
async function blobPage(
  state: MysqlBackendState,
  tx: Db,
  step: Extract<WriteStep, { kind: "collect-blobs" }>,
  /** false: every blob past the grace, its claims left to the caller (unclaimedBut). */
  claimCheck: boolean,
): Promise<{
  bounds: Omit<BlobPage, "deleted" | "bytes">;
  candidates: { ref: string; claimed: boolean }[];
}> {
  const { blobs, blobRefs } = state.tables;
  const from = step.after === undefined ? sql`true` : sql`${blobs.blobRef} > ${step.after}`;
  const page = sql`(SELECT ${blobs.blobRef} AS blob_ref, ${blobs.touchedAt} AS touched_at
      FROM ${blobs} WHERE ${from} ORDER BY ${blobs.blobRef} LIMIT ${step.limit})`;
  const pastGrace = sql`p.touched_at <= ${serverEpochMs} - ${step.graceMs}`;
  const doomed = claimCheck
    ? sql`${pastGrace} AND NOT ${claimedByLiveSession(state.tables, sql`p.blob_ref`)}`
    : pastGrace;
  const rows = await tx
    .select({
      ref: sql<string>`c.ref`.mapWith(String),
      examined: sql<number>`c.examined`.mapWith(Number),
      last: sql<string>`c.last`.mapWith(String),
      doomed: sql<number>`c.doomed`.mapWith(Number),
      claimed: sql<number>`c.claimed`.mapWith(Number),
    })
    .from(sql`(SELECT p.blob_ref AS ref, l.examined, l.last, ${doomed} AS doomed,
          EXISTS (SELECT 1 FROM ${blobRefs} r WHERE r.blob_ref = p.blob_ref) AS claimed
        FROM ${page} p
        JOIN (SELECT count(*) AS examined, max(q.blob_ref) AS last FROM ${page} q) l) c`)
    .where(sql`c.doomed OR c.ref = c.last`);
  const first = rows[0];
  if (first === undefined) return { bounds: { examined: 0, last: undefined }, candidates: [] };
  return {
    bounds: { examined: first.examined, last: first.last },
    candidates: rows
      .filter((row) => row.doomed === 1)
      .map((row) => ({ ref: row.ref, claimed: row.claimed === 1 })),
  };
}
