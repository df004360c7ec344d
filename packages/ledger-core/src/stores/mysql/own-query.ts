import type mysql from "mysql2/promise";

/**
 * One of the store's own statements, read as rows of named columns with the driver's default
 * casts whatever the pool's options say: an application's pool may read its rows as arrays
 * (`rowsAsArray`), nested by table (`nestTables`) or cast its own way (`typeCast`). Drizzle's
 * queries set these themselves.
 */
export function own(sql: string): mysql.QueryOptions {
  return { sql, rowsAsArray: false, nestTables: false, typeCast: true };
}
