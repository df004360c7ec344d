import type mysql from "mysql2/promise";
import { InvalidArgumentError } from "../../events/errors.js";
import { createdTables } from "../sql/migrations.js";
import { own } from "./own-query.js";

/** The columns of `table` in the connection's database, in order. */
async function columnsOf(connection: mysql.PoolConnection, table: string): Promise<string[]> {
  const [columns] = (await connection.query(
    own(
      "SELECT column_name AS name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position",
    ),
    [table],
  )) as unknown as [{ name: string }[]];
  return columns.map((column) => column.name);
}

/**
 * Refuses, before anything is written, a database without a recorded ledger version that holds
 * a table of a name the ledger uses which the ledger did not make. Such a table of ours can only
 * be one the first migration created before its migrator died (each version is recorded as soon
 * as its statements ran): it has exactly the columns of that CREATE TABLE, and no rows (no
 * append runs before init() finished). Anything else is another application's table (express-
 * mysql-session's `sessions`, say): the migration would skip its CREATE TABLE as already applied,
 * record the ledger's versions, and every append would then fail on a column the table lacks.
 * `existing` holds the database's tables; `path` names the option that names the database.
 */
export async function assertNoForeignTables(
  connection: mysql.PoolConnection,
  existing: Set<string>,
  path: string,
): Promise<void> {
  for (const made of createdTables("mysql").filter(({ table }) => existing.has(table))) {
    const columns = await columnsOf(connection, made.table);
    let why: string | undefined;
    if (made.version !== 1) why = "a table a later migration makes, where no ledger is";
    else if (columns.join(",") !== made.columns.join(","))
      why = `its columns are ${columns.join(", ")}, the ledger's ${made.columns.join(", ")}`;
    else {
      const [rows] = (await connection.query(
        own(`SELECT 1 FROM \`${made.table}\` LIMIT 1`),
      )) as unknown as [unknown[]];
      if (rows.length > 0) why = "it holds rows and the database no ledger schema version";
    }
    if (why !== undefined) throw foreignTable(made.table, why, path);
  }
}

/**
 * Refuses a schema_version table the ledger did not make (another tool's, as Flyway 4 names
 * its own), before its rows are read as the ledger's versions: a ledger's has exactly the
 * columns its CREATE TABLE gives it. Nothing to check where there is none.
 */
export async function assertLedgerVersionTable(
  connection: mysql.PoolConnection,
  path: string,
): Promise<void> {
  const columns = await columnsOf(connection, "schema_version");
  const made = createdTables("mysql").find(({ table }) => table === "schema_version");
  if (columns.length === 0 || made === undefined || columns.join(",") === made.columns.join(","))
    return;
  throw foreignTable(
    "schema_version",
    `its columns are ${columns.join(", ")}, the ledger's ${made.columns.join(", ")}`,
    path,
  );
}

function foreignTable(table: string, why: string, path: string): InvalidArgumentError {
  return new InvalidArgumentError(
    path,
    `the database already has a table ${table} that agent-ledger did not make (${why}): the ledger needs a database of its own, where no other application keeps tables; name another database in the store URL (CREATE DATABASE agent_ledger). Nothing was written`,
    { details: { table } },
  );
}
