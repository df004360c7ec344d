import { type SQL, sql } from "drizzle-orm";
import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import { BLOB_BYTES_PER_STATEMENT, blobValues } from "../sql/shared-queries.js";
import type { BlobRow } from "../sql/sql-backend.js";
import type { PostgresBackendState } from "./backend-state.js";
import { storeBlobsAfterLocks } from "./blob-stamp.js";
import { quoteIdent } from "./quote-ident.js";
import { boundDb, inTransaction } from "./transaction.js";

/** `PostgresBackend.putBlobs` (its comment says how a put commits, and why). */
export async function putBlobRows(
  state: PostgresBackendState,
  db: NodePgDatabase,
  rows: BlobRow[],
  durable: boolean,
  sessionId: string | undefined,
): Promise<void> {
  const chunks = blobValues(rows, BLOB_BYTES_PER_STATEMENT);
  if (chunks.length === 1) {
    await db.execute(putStatement(state, chunks[0] ?? [], durable, sessionId));
    return;
  }
  // The setting made by the first statement holds until the transaction's commit. The store's
  // own transaction, not drizzle's: drizzle gives a client back to the pool whatever failed on
  // it, a connection whose statement timed out included.
  await inTransaction(state, async (client) => {
    const tx = boundDb(state, client);
    for (const [index, values] of chunks.entries())
      await tx.execute(putStatement(state, values, durable || index > 0, sessionId));
  });
}

/** One chunk's blobs and claims in one statement; `durable` false: an asynchronous commit. */
export function putStatement(
  state: PostgresBackendState,
  values: ReturnType<typeof blobValues>[number],
  durable: boolean,
  sessionId: string | undefined,
): SQL {
  const { blobRefs } = state.tables;
  // Named as the one-statement append names it (append-queries.ts).
  const blobsTable = `${quoteIdent(state.schema)}."blobs"`;
  const parts: SQL[] = [];
  if (!durable) parts.push(sql`a AS (SELECT set_config('synchronous_commit', 'off', true))`);
  // The rows once, as `v`: the locks and the upsert both read them (storeBlobsAfterLocks).
  const blobRows = values.map((row) => sql`(${row.blobRef}::text, ${row.content}::bytea)`);
  parts.push(sql`v (ref, content) AS (VALUES ${sql.join(blobRows, sql`, `)})`);
  parts.push(sql.raw(storeBlobsAfterLocks(blobsTable, "v AS x")));
  if (sessionId !== undefined) {
    const claims = values.map((row) => sql`(${row.blobRef}, ${sessionId})`);
    parts.push(sql`r AS (INSERT INTO ${blobRefs} (blob_ref, session_id)
  VALUES ${sql.join(claims, sql`, `)} ON CONFLICT DO NOTHING)`);
  }
  return sql`WITH ${sql.join(parts, sql`, `)} SELECT ${durable ? sql`1` : sql`(SELECT 1 FROM a)`}`;
}
