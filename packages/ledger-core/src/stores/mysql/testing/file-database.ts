import mysql from "mysql2/promise";
import { afterAll, beforeAll } from "vitest";
import { uuidv7 } from "../../../events/ids.js";
import { SERVER_URLS } from "../../../testing/servers.js";

/**
 * A database for the test file, on a pool of its own when the server is `available` (no pool
 * otherwise: nothing is made). Call it at the top of the file: it registers the hooks that create
 * the database before the file's tests and drop it, and end the pool, after them.
 */
export function mysqlFileDatabase(available: boolean): {
  database: string;
  pool: mysql.Pool | undefined;
} {
  const database = `ledger_store_${uuidv7().replaceAll("-", "")}`;
  const pool = available
    ? mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 3 })
    : undefined;
  // Made in a hook, not at load: a run that filters these tests out leaves no database.
  beforeAll(async () => {
    await pool?.query(`CREATE DATABASE \`${database}\``);
  });
  afterAll(async () => {
    await pool?.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await pool?.end();
  });
  return { database, pool };
}
