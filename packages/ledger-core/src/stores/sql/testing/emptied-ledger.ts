import type mysql from "mysql2/promise";
import type pg from "pg";

/**
 * Where the conformance suite's stores go when every case wants an empty store (its
 * `makeStore` contract): one place for all of a suite's cases, emptied between them. The first
 * call gives the place `make` returns, new, and its first store's init() makes the tables (on
 * the pool under test); each later call first deletes every row `empty` finds. A new place per
 * case cost its DDL every time: CREATE DATABASE and the migrations took 36 to 250 ms a case on
 * MariaDB as the machine's load went (the DELETEs 10 to 15 ms), and suites run at the same
 * time slowed each other's DDL (mysql-app-pool's three: 37-39 s so, 20-25 s emptied).
 */
export function emptiedEachTime(
  make: () => string | Promise<string>,
  empty: (place: string) => Promise<void>,
): () => Promise<string> {
  let place: string | undefined;
  return async () => {
    if (place === undefined) place = await make();
    else await empty(place);
    return place;
  };
}

/**
 * Deletes the rows of every table of a MariaDB database but schema_version, which stays as
 * init() leaves it (the tables at this release's version), so init() finds nothing to do and
 * the store is as a new one is after its init(). The ledger's tables have no AUTO_INCREMENT
 * (cursors count per session), so no counter survives the rows. DELETE, not TRUNCATE: MariaDB
 * makes a TRUNCATE a table's DDL again (80 ms for the five, against 15 ms).
 */
export async function emptyMysqlDatabase(admin: mysql.Connection, database: string): Promise<void> {
  const [tables] = (await admin.query(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_name <> 'schema_version'",
    [database],
  )) as unknown as [{ name: string }[]];
  for (const { name } of tables) await admin.query(`DELETE FROM \`${database}\`.\`${name}\``);
}

/**
 * Deletes the rows of every table of a PostgreSQL schema but schema_version, for the reason
 * emptyMysqlDatabase gives (no sequence to restart: cursors count per session). DELETE, not
 * TRUNCATE: TRUNCATE gives each table and index a new file, 10 ms a case against 3.4 ms (a new
 * schema and its migrations: 24 ms, 35 ms on a loaded machine). The dead rows left are a
 * case's few, for autovacuum.
 */
export async function emptyPostgresSchema(
  admin: pg.Pool | pg.Client,
  schema: string,
): Promise<void> {
  const { rows } = await admin.query<{ name: string }>(
    "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1 AND tablename <> 'schema_version'",
    [schema],
  );
  // One round trip: several statements without parameters go as one simple query.
  if (rows.length > 0)
    await admin.query(rows.map(({ name }) => `DELETE FROM "${schema}"."${name}";`).join(" "));
}
