import { bufferOf } from "../../store/blob.js";
import type { SqliteBackendState } from "./backend-state.js";
import { refDigest } from "./ref-digest.js";
import { epochMs } from "./sqlite-clock.js";
import { writeStatements } from "./write-statements.js";

/** `SqliteBackend.putBlobs`. */
export function putBlobRows(
  state: SqliteBackendState,
  rows: { ref: string; stored: Uint8Array }[],
  durable: boolean,
  sessionId: string | undefined,
): void {
  const indexRef = sessionId === undefined ? undefined : writeStatements(state).indexRef;
  const put = () => {
    if (indexRef !== undefined) for (const row of rows) indexRef.run(refDigest(row.ref), sessionId);
    storeBlobs(state, rows);
  };
  if (durable) {
    if (rows.length === 1 && indexRef === undefined) put();
    else state.database.transaction(put).immediate();
    return;
  }
  // Blobs put right before the append that names them: committed without an
  // fsync of their own. The WAL is one sequential file, so the fsync of that append's
  // commit (synchronous = FULL) makes these frames durable too, before the event is.
  state.database.pragma("synchronous = NORMAL");
  try {
    state.database.transaction(put).immediate();
  } finally {
    state.database.pragma("synchronous = FULL");
  }
}

/** Inserts blobs, or sets their touched_at again (inside a transaction, or one alone). */
export function storeBlobs(
  state: SqliteBackendState,
  rows: readonly { ref: string; stored: Uint8Array }[],
): void {
  if (rows.length === 0) return;
  if (state.putBlob === undefined) {
    state.putBlob = state.database.prepare(
      `INSERT INTO blobs (digest, content, touched_at) VALUES (?, ?, ${epochMs})
         ON CONFLICT (digest) DO UPDATE SET touched_at = excluded.touched_at`,
    );
  }
  const statement = state.putBlob;
  for (const row of rows) statement.run(refDigest(row.ref), bufferOf(row.stored));
}
