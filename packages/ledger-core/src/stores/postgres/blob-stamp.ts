import { SERVER_EPOCH_MS } from "./server-clock.js";

/**
 * The CTEs `l` and `b` of a statement that stores blobs (a put, an append that carries them):
 * `l` locks, in ref order (the order of every writer and collection), the rows already stored
 * among the blobs of `rows`, a FROM list that names them `x(ref, content)`; then `b` upserts
 * them, stamping each with the server's clock once its row is the statement's.
 *
 * Why after the locks: a stamp read as the statement began, before it waited for a row that
 * another transaction held (a collection, another writer), was already past the retention
 * grace when the wait was longer, and the next collection deleted a blob put right before.
 * `b`'s condition on `l` is a one-time filter, evaluated (and so `l`'s waits waited) before
 * `b` reads its first row and the clock; ON CONFLICT's SET is evaluated with the row locked;
 * and a row that a collection deleted while `l` waited is inserted again with the later
 * clock (ON CONFLICT sees no conflict with a deleted row). The migration 0007's function
 * stores the blobs of gathered appends the same way.
 */
export function storeBlobsAfterLocks(blobs: string, rows: string): string {
  return `l AS (
  SELECT 1 FROM ${blobs} WHERE blob_ref IN (SELECT x.ref FROM ${rows})
  ORDER BY blob_ref FOR UPDATE
), b AS (
  INSERT INTO ${blobs} (blob_ref, content, touched_at)
  SELECT x.ref, x.content, ${SERVER_EPOCH_MS} FROM ${rows}
  WHERE (SELECT count(*) FROM l) >= 0
  ON CONFLICT (blob_ref) DO UPDATE SET touched_at = ${SERVER_EPOCH_MS}
)`;
}
