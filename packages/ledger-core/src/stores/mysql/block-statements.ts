import { SERVER_EPOCH_MS_LIVE } from "./server-clock.js";

/**
 * In a compound block: the (blob, session) claims of a JSON array of refs, for one session;
 * binds the session, then the array. One parameter for any number of refs, so the block
 * keeps its shape.
 */
export function claimsStatement(prefix: string): string {
  return `INSERT IGNORE INTO ${prefix}blob_refs (blob_ref, session_id)
    SELECT j.ref, ? FROM JSON_TABLE(?, '$[*]' COLUMNS (ref VARCHAR(80) PATH '$')) AS j;`;
}

/**
 * In a compound block: the upsert of `count` blobs, binding a JSON array of their refs, then
 * each one's ref and its bytes. The stored rows among them are locked first, in ref order (the
 * order of every writer and collection), and the INSERT stamps them after, on the clock as it
 * runs (SERVER_EPOCH_MS_LIVE): an INSERT that itself waited for a row another
 * transaction held (a collection, another writer) wrote a stamp read before the wait, past the
 * retention grace after a long one, and the next collection deleted a blob put moments before.
 * A row a collection deleted while the lock waited is inserted again, stamped after the wait.
 */
export function blobsStatement(prefix: string, count: number): string {
  return `SELECT COUNT(*) INTO @agent_ledger_locked FROM ${prefix}blobs
    WHERE blob_ref IN (SELECT j.ref FROM JSON_TABLE(?, '$[*]' COLUMNS (ref VARCHAR(80) PATH '$')) AS j)
    ORDER BY blob_ref FOR UPDATE;
  INSERT INTO ${prefix}blobs (blob_ref, content, touched_at)
    VALUES ${Array.from({ length: count }, () => `(?, ?, ${SERVER_EPOCH_MS_LIVE})`).join(", ")}
    ON DUPLICATE KEY UPDATE touched_at = ${SERVER_EPOCH_MS_LIVE};`;
}
