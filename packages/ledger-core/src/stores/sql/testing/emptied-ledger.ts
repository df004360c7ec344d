import type mysql from "mysql2/promise";
import type pg from "pg";

/**
 * Where the conformance suite's stores go when every case wants an empty store (its
 * `makeStore` contract): one place for all of a suite's cases, emptied between them. The first
 * call gives the place `make` returns, new, and its first store's init() makes the tables (on
 * the pool under test); each later call first deletes every row `empty` finds. A new place per
 * case cost its DDL every time (CREATE DATABASE and the migrations, 250 ms on MariaDB, more
 * on a loaded machine), most of what some of these files took.
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
 * Empties every table of a PostgreSQL schema but schema_version, in one TRUNCATE (no sequence
 * to restart: cursors count per session), for the reason emptyMysqlDatabase gives. TRUNCATE,
 * not DELETE: deleted rows would stay behind as dead tuples that later cases' reads scan.
 */
export async function emptyPostgresSchema(
  admin: pg.Pool | pg.Client,
  schema: string,
): Promise<void> {
  const { rows } = await admin.query<{ name: string }>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE' AND table_name <> 'schema_version'",
    [schema],
  );
  if (rows.length === 0) return;
  await admin.query(`TRUNCATE ${rows.map(({ name }) => `"${schema}"."${name}"`).join(", ")}`);
}
