import type { blobValues } from "../sql/shared-queries.js";
import type { BlobRow } from "../sql/sql-backend.js";
import type { MysqlBackendState } from "./backend-state.js";
import { FEW_BLOBS } from "./block-shape.js";
import { blobsStatement, claimsStatement } from "./block-statements.js";
import { blobChunks } from "./packet-limits.js";
import { runBlock } from "./run-block.js";
import { canRunBlocks, packetLimit } from "./server-limits.js";
import { inTransaction } from "./transaction.js";
import { executeStep } from "./write-steps.js";

/** `MysqlBackend.putBlobs`. */
export async function putBlobRows(
  state: MysqlBackendState,
  rows: BlobRow[],
  sessionId: string | undefined,
): Promise<void> {
  const maxPacket = await packetLimit(state);
  const chunks = blobChunks(rows, maxPacket);
  const chunk = chunks.length === 1 ? chunks[0] : undefined;
  if (chunk !== undefined && (state.blocks ?? (await canRunBlocks(state)))) {
    await putBlock(state, chunk, sessionId);
    return;
  }
  // Blobs and claims in one transaction (see SqlBackend.putBlobs), one commit: the steps an
  // append that carries blobs takes.
  await inTransaction(state, async (tx) => {
    await executeStep(state, tx, { kind: "put-blobs", blobs: rows }, maxPacket);
    if (sessionId !== undefined)
      await executeStep(
        state,
        tx,
        { kind: "index-refs", sessionId, refs: rows.map((row) => row.ref) },
        maxPacket,
      );
  });
}

/**
 * A put of one chunk on MariaDB: its blobs and claims in one compound statement, one round
 * trip and one commit, the contents bound as binary values (not hex in the text). Its shape
 * goes with the number of blobs: the few a recorded call puts (a message, its list node)
 * stay prepared on the connection, which saves the prepare's round trip on the next call;
 * larger puts are closed after use.
 */
async function putBlock(
  state: MysqlBackendState,
  values: ReturnType<typeof blobValues>[number],
  sessionId: string | undefined,
): Promise<void> {
  const prefix = state.tablePrefix;
  const bound: (string | Buffer)[] = [JSON.stringify(values.map((row) => row.blobRef))];
  for (const row of values) bound.push(row.blobRef, row.content);
  let claims = "";
  if (sessionId !== undefined) {
    bound.push(sessionId, JSON.stringify(values.map((row) => row.blobRef)));
    claims = claimsStatement(prefix);
  }
  const statement = `BEGIN NOT ATOMIC
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  ${blobsStatement(prefix, values.length)}
  ${claims}
  COMMIT;
END`;
  await runBlock(state, statement, bound, values.length <= FEW_BLOBS);
}
