import { drizzle } from "drizzle-orm/mysql2";
import type mysql from "mysql2/promise";
import { LedgerError } from "../../events/errors.js";
import { driverError } from "../sql/sql-backend.js";
import type { Db, MysqlBackendState } from "./backend-state.js";
import { boundedConnection, checkout, destroyConnection } from "./bounded.js";
import { unnested } from "./own-query.js";
import { statementErrnos } from "./statement-errors.js";

/** `body` in one READ COMMITTED transaction on a pooled connection, rolled back on error. */
export async function inTransaction<T>(
  state: MysqlBackendState,
  body: (tx: Db) => Promise<T>,
): Promise<T> {
  const connection = await checkout(state.pool, state.timeoutMs);
  // Every statement of the transaction within the store's bound, drizzle's too.
  const bounded = boundedConnection(connection, state.timeoutMs);
  let healthy = true;
  try {
    await bounded.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    await bounded.query("START TRANSACTION");
    let db = state.bound.get(connection);
    if (db === undefined) {
      db = drizzle({ client: unnested(bounded, state.pool) as unknown as mysql.Connection });
      state.bound.set(connection, db);
    }
    const result = await body(db);
    await bounded.query("COMMIT");
    return result;
  } catch (error) {
    const errno = driverError(error).errno;
    if (LedgerError.isInstance(error) || (errno !== undefined && statementErrnos.has(errno))) {
      await bounded.query("ROLLBACK").catch(() => {
        healthy = false;
      });
    } else {
      healthy = false;
    }
    throw error;
  } finally {
    if (healthy) connection.release();
    else destroyConnection(connection);
  }
}
