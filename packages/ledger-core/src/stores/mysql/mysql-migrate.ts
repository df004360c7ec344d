import type mysql from "mysql2/promise";
import { pendingMigrations } from "../sql/migrations.js";
import { driverError } from "../sql/sql-backend.js";
import { assertNoForeignTables } from "./foreign-tables.js";
import { own } from "./own-query.js";
import { checkLedgerTables, checkNewTables, type StorageSettings } from "./storage-settings.js";

/**
 * What a migration statement answers when a killed migrator already ran it: table exists,
 * duplicate column, duplicate key name, multiple primary key, cannot drop (already dropped).
 */
const alreadyAppliedErrnos = new Set([1050, 1060, 1061, 1068, 1091]);

/** The tables of the connection's database, by name. */
async function tableNames(connection: mysql.PoolConnection): Promise<Set<string>> {
  const [tables] = (await connection.query(
    own("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE()"),
  )) as unknown as [{ name: string }[]];
  return new Set(tables.map((table) => table.name));
}

/** Whether the connection's database holds the ledger's tables (its schema_version table). */
export async function hasLedger(connection: mysql.PoolConnection): Promise<boolean> {
  return (await tableNames(connection)).has("schema_version");
}

/**
 * The database's ledger version: its schema_version table's highest, 0 without one. What
 * migrateMysql upgrades from; `init({ upgrade: false })` checks it before the migration lock.
 */
export async function ledgerVersion(
  connection: mysql.PoolConnection,
  existing?: Set<string>,
): Promise<number> {
  if (!(existing ?? (await tableNames(connection))).has("schema_version")) return 0;
  const [rows] = (await connection.query(
    own("SELECT max(version) AS version FROM schema_version"),
  )) as unknown as [{ version: number | null }[]];
  return Number(rows[0]?.version ?? 0);
}

/**
 * Applies the pending migrations on `connection` (in the store's database, under the caller's
 * migration lock). MySQL commits each DDL statement on its own: a migrator that died inside a
 * migration (only ever the first pending one, since each version is recorded as soon as its
 * statements ran) left some of its statements committed, so that migration skips a statement
 * whose work is already there (each statement is atomic). On a database without any recorded
 * version, a table of a ledger's name that is not what a killed first migration leaves is
 * another application's: refused at `path`, before anything is written (assertNoForeignTables).
 * So are ledger tables that are not InnoDB tables of utf8mb4 text, and, when a migration is
 * pending, settings under which its new tables would not be (`path` names the option that sets
 * the connection's engine). A newer ledger is refused (`location` names it).
 */
export async function migrateMysql(
  connection: mysql.PoolConnection,
  settings: StorageSettings,
  path: string,
  location: string,
): Promise<void> {
  const existing = await tableNames(connection);
  const version = await ledgerVersion(connection, existing);
  const pending = pendingMigrations("mysql", version, location);
  if (version === 0) await assertNoForeignTables(connection, existing, path);
  // A ledger at this version runs no DDL and needs only these reads (a reader's credentials).
  await checkLedgerTables(connection, settings.database);
  if (pending.length === 0) return;
  checkNewTables(settings, path);
  for (const migration of pending) {
    const resumable = migration === pending[0];
    for (const statement of migration.statements) {
      try {
        await connection.query(own(statement));
      } catch (error) {
        const errno = driverError(error).errno;
        if (!resumable || errno === undefined || !alreadyAppliedErrnos.has(errno)) throw error;
      }
    }
    await connection.query(
      own("INSERT INTO schema_version (version, tag, applied_at) VALUES (?, ?, ?)"),
      [migration.version, migration.tag, new Date().toISOString()],
    );
  }
  // What the server made of them (e.g. a MariaDB enforce_storage_engine): refused now, not
  // at the first write.
  await checkLedgerTables(connection, settings.database);
}
