import type pg from "pg";
import { driverError } from "../sql/sql-backend.js";
import type { NamedQuery } from "./append-queries.js";
import type { PostgresBackendState } from "./backend-state.js";
import { statementErrors, statementNameErrors } from "./statement-errors.js";

/**
 * One statement on a pooled client; a client whose connection failed is destroyed. The
 * statement goes by its name (parsed and planned once per connection) until the server
 * answers that the name is unknown or already taken on the connection it reached: a pooler
 * in transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`) hands
 * each transaction to any of its server connections, while node-postgres remembers what it
 * prepared per client. From then on this store sends its statements unnamed, and the one
 * refused is sent again so: the server executed nothing of it.
 */
export async function autocommit<R extends pg.QueryResultRow>(
  state: PostgresBackendState,
  query: NamedQuery,
  values: unknown[],
): Promise<pg.QueryResult<R>> {
  // Its 'error' listener was given as the pool handed it out (client-errors.ts).
  const client = await state.pool.connect();
  let broken: Error | undefined;
  try {
    if (!state.named) return await client.query<R>({ text: query.text, values });
    try {
      return await client.query<R>({ ...query, values });
    } catch (error) {
      if (!statementNameErrors.has(driverError(error).code ?? "")) throw error;
      state.named = false;
      return await client.query<R>({ text: query.text, values });
    }
  } catch (error) {
    const code = driverError(error).code;
    if (code === undefined || !statementErrors.test(code))
      broken = error instanceof Error ? error : new Error(String(error));
    throw error;
  } finally {
    client.release(broken);
  }
}
