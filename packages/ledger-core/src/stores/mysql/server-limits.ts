import type { MysqlBackendState } from "./backend-state.js";
import { withConnection } from "./bounded.js";
import { own } from "./own-query.js";
import { multiResults } from "./pool-config.js";

/** Whether the server runs anonymous compound blocks (MariaDB), once asked. */
export async function canRunBlocks(state: MysqlBackendState): Promise<boolean> {
  if (state.blocks === undefined) await askServer(state);
  return state.blocks as boolean;
}

/** The server's max_allowed_packet, once asked (with the server kind). */
export async function packetLimit(state: MysqlBackendState): Promise<number> {
  if (state.maxPacket === undefined) await askServer(state);
  return state.maxPacket as number;
}

/**
 * Asks the server once (two first callers at once may both ask: the answer is the same).
 * A pool whose connections lack MULTI_RESULTS (an application's `flags: "-MULTI_RESULTS"`)
 * cannot run blocks: the server refuses a block that answers with a result set there (before
 * running it), so every append on the path would fail.
 */
async function askServer(state: MysqlBackendState): Promise<void> {
  const [rows] = await withConnection(state.pool, state.timeoutMs, (connection) =>
    connection.query(own("SELECT VERSION() AS version, @@max_allowed_packet AS packet")),
  );
  const row = (rows as { version?: unknown; packet?: unknown }[])[0];
  state.maxPacket = Number(row?.packet);
  state.blocks = /mariadb/i.test(String(row?.version)) && multiResults(state.pool);
}
