import { drizzle } from "drizzle-orm/mysql2";
import type mysql from "mysql2/promise";
import { LedgerError } from "../../events/errors.js";
import { driverError } from "../sql/sql-backend.js";
import type { Db, MysqlBackendState } from "./backend-state.js";
import { statementErrnos } from "./statement-errors.js";

/** `body` in one READ COMMITTED transaction on a pooled connection, rolled back on error. */
export async function inTransaction<T>(
  state: MysqlBackendState,
  body: (tx: Db) => Promise<T>,
): Promise<T> {
  const connection = await state.pool.getConnection();
  let healthy = true;
  try {
    await connection.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
    await connection.query("START TRANSACTION");
    let db = state.bound.get(connection);
    if (db === undefined) {
      db = drizzle({ client: connection as unknown as mysql.Connection });
      state.bound.set(connection, db);
    }
    const result = await body(db);
    await connection.query("COMMIT");
    return result;
  } catch (error) {
    const errno = driverError(error).errno;
    if (LedgerError.isInstance(error) || (errno !== undefined && statementErrnos.has(errno))) {
      await connection.query("ROLLBACK").catch(() => {
        healthy = false;
      });
    } else {
      healthy = false;
    }
    throw error;
  } finally {
    if (healthy) connection.release();
    else connection.destroy();
  }
}
