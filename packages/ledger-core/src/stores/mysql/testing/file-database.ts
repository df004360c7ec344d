import mysql from "mysql2/promise";
import { afterAll, beforeAll } from "vitest";
import { freshPlaces } from "../../../testing/fresh-places.js";
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
  const { database, create } = freshPlaces(afterAll).database("store");
  const pool = available
    ? mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 3 })
    : undefined;
  // Made in a hook, not at load: a run that filters these tests out leaves no database.
  beforeAll(async () => {
    if (available) await create();
  });
  afterAll(async () => {
    await pool?.end();
  });
  return { database, pool };
}
