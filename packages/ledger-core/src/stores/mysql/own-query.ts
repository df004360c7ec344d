import type mysql from "mysql2/promise";
import { overriding } from "../server-timeout.js";
import { nestsTables } from "./pool-config.js";

/**
 * One of the store's own statements, read as rows of named columns with the driver's default
 * casts whatever the pool's options say: an application's pool may read its rows as arrays
 * (`rowsAsArray`), nested by table (`nestTables`) or cast its own way (`typeCast`). Drizzle's
 * queries set the first and the last themselves; see unnested for the other.
 */
export function own(sql: string): mysql.QueryOptions {
  return { sql, rowsAsArray: false, nestTables: false, typeCast: true };
}

/**
 * `client` (the pool, or one of its connections) as drizzle is given it: on a pool whose rows
 * are nested by table, each statement says `nestTables: false`. Drizzle sets `rowsAsArray` and
 * `typeCast` on its statements but not that, and under it mysql2 reads a row drizzle asked as
 * an array as an array of nulls: the next append's cursor was NaN and the statement failed. Any
 * other pool is given as it is.
 */
export function unnested<T extends mysql.Pool | mysql.PoolConnection>(
  client: T,
  pool: mysql.Pool,
): T {
  if (!nestsTables(pool)) return client;
  const flat =
    (method: "query" | "execute") =>
    (statement: string | mysql.QueryOptions, ...rest: unknown[]) =>
      Reflect.apply(client[method], client, [
        typeof statement === "string"
          ? { sql: statement, nestTables: false }
          : { ...statement, nestTables: false },
        ...rest,
      ]);
  return overriding(client, { query: flat("query"), execute: flat("execute") });
}
