import { SERVER_EPOCH_MS } from "./server-clock.js";

/**
 * In a compound block: the (blob, session) claims of a JSON array of refs, for one session;
 * binds the session, then the array. One parameter for any number of refs, so the block
 * keeps its shape.
 */
export function claimsStatement(prefix: string): string {
  return `INSERT IGNORE INTO ${prefix}blob_refs (blob_ref, session_id)
    SELECT j.ref, ? FROM JSON_TABLE(?, '$[*]' COLUMNS (ref VARCHAR(80) PATH '$')) AS j;`;
}

/** In a compound block: the upsert of `count` blobs, binding each one's ref, then its bytes. */
export function blobsStatement(prefix: string, count: number): string {
  return `INSERT INTO ${prefix}blobs (blob_ref, content, touched_at)
    VALUES ${Array.from({ length: count }, () => `(?, ?, ${SERVER_EPOCH_MS})`).join(", ")}
    ON DUPLICATE KEY UPDATE touched_at = VALUES(touched_at);`;
}
