import { driverError } from "../sql/sql-backend.js";
import type { MysqlBackendState } from "./backend-state.js";
import { boundedConnection, checkout, destroyConnection } from "./bounded.js";
import { own } from "./own-query.js";
import { statementErrnos } from "./statement-errors.js";

/**
 * Runs a compound statement as a server-side prepared statement (one text per shape, cached
 * per connection by the driver when `keep`: the block is parsed once per connection, and the
 * values travel in the binary protocol instead of being escaped into the text). Returns the
 * row of its final SELECT, if it reached it. A connection that failed is destroyed.
 */
export async function runBlock(
  state: MysqlBackendState,
  statement: string,
  values: (string | number | Buffer | null)[],
  keep: boolean,
): Promise<Record<string, unknown> | undefined> {
  const connection = await checkout(state.pool, state.timeoutMs);
  let healthy = true;
  const query = own(statement);
  try {
    const [result] = (await boundedConnection(connection, state.timeoutMs).execute(
      query,
      values,
    )) as unknown as [unknown];
    // With the SELECT: [rows, ok packet]; without (nothing written): one ok packet.
    const selected = Array.isArray(result) ? (result[0] as unknown) : undefined;
    return Array.isArray(selected)
      ? (selected[0] as Record<string, unknown> | undefined)
      : undefined;
  } catch (error) {
    const errno = driverError(error).errno;
    if (errno === undefined || !statementErrnos.has(errno)) healthy = false;
    throw error;
  } finally {
    if (healthy) {
      // A shape that may not come again is closed after use (COM_STMT_CLOSE: no round trip).
      // Every statement a connection keeps prepared counts against the server's global
      // max_prepared_stmt_count, which the application shares.
      if (!keep) connection.unprepare(query);
      connection.release();
    } else destroyConnection(connection);
  }
}
