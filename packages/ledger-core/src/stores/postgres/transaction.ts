import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import { LedgerError } from "../../events/errors.js";
import { driverError } from "../sql/sql-backend.js";
import type { PostgresBackendState } from "./backend-state.js";
import { statementErrors } from "./statement-errors.js";

/** `body` on one client of the pool, inside a READ COMMITTED transaction (see PostgresBackend). */
export async function inTransaction<T>(
  state: PostgresBackendState,
  body: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  // Its 'error' listener was given as the pool handed it out (client-errors.ts).
  const client = await state.pool.connect();
  let broken: Error | undefined;
  try {
    // The program's locks (FOR UPDATE on the run head, the session counter's upsert) are
    // made for READ COMMITTED, where a writer that waited on a lock reads the row its
    // predecessor committed. Set here, not left to the connection: an application may make
    // its pool's transactions REPEATABLE READ or SERIALIZABLE (default_transaction_isolation),
    // and there every writer that waited fails with a serialization error instead.
    await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
    const result = await body(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    const code = driverError(error).code;
    // A ledger error from the program, or a failed statement: the connection is fine.
    if (LedgerError.isInstance(error) || (code !== undefined && statementErrors.test(code))) {
      await client.query("ROLLBACK").catch((rollbackError: Error) => {
        broken = rollbackError;
      });
    } else {
      broken = error instanceof Error ? error : new Error(String(error));
    }
    throw error;
  } finally {
    client.release(broken);
  }
}

/** A drizzle instance on one client of the pool (made once per client), for its transaction. */
export function boundDb(state: PostgresBackendState, client: pg.PoolClient): NodePgDatabase {
  let db = state.bound.get(client);
  if (db === undefined) {
    db = drizzle({ client });
    state.bound.set(client, db);
  }
  return db;
}
