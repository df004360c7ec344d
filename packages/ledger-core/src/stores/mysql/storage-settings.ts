import type mysql from "mysql2/promise";
import { InvalidArgumentError } from "../../events/errors.js";
import { loadMigrations } from "../sql/migrations.js";
import { driverError } from "../sql/sql-backend.js";
import { own } from "./own-query.js";

/**
 * Where a table the shipped migrations create (they name no engine and no character set: they
 * are drizzle-kit's, and stored ledgers were made by them) gets both from: the session's
 * default storage engine and the database's default character set.
 */
export interface StorageSettings {
  database: string;
  charset: string | null;
  engine: string | null;
  /** innodb_flush_log_at_trx_commit, as init read it ("unknown" where the server has none). */
  flushLogAtCommit: number | "unknown";
}

/** Reads the storage settings of the connection's database (one it has selected). */
export async function readStorageSettings(
  connection: mysql.PoolConnection,
): Promise<StorageSettings> {
  const [rows] = (await connection.query(
    own(
      "SELECT DATABASE() AS name, @@SESSION.default_storage_engine AS engine, (SELECT default_character_set_name FROM information_schema.schemata WHERE schema_name = DATABASE()) AS charset",
    ),
  )) as unknown as [{ name: string; engine: string | null; charset: string | null }[]];
  let flushLogAtCommit: number | "unknown" = "unknown";
  try {
    const [flush] = (await connection.query(
      own("SELECT @@innodb_flush_log_at_trx_commit AS flush"),
    )) as unknown as [{ flush: unknown }[]];
    flushLogAtCommit = Number(flush[0]?.flush);
  } catch (error) {
    // A server without InnoDB has no such variable (and is refused when tables are made).
    if (driverError(error).errno !== 1193) throw error;
  }
  return {
    database: String(rows[0]?.name),
    charset: rows[0]?.charset ?? null,
    engine: rows[0]?.engine ?? null,
    flushLogAtCommit,
  };
}

/** A MySQL identifier in backquotes (a backquote in it doubled). */
export function quoteIdent(name: string): string {
  return `\`${name.replaceAll("`", "``")}\``;
}

/**
 * Refuses, before a migration creates a table, settings that would make it anything but an
 * InnoDB table of utf8mb4 text: in another character set, characters it cannot hold fail every
 * append under a strict sql_mode, and are stored as `?` and acknowledged under any other (the
 * run then fails verification); another engine (MyISAM) has no transactions, so an append is
 * not atomic, nor durable on commit, and the first migration fails half way on its keys.
 */
export function checkNewTables(settings: StorageSettings, path: string): void {
  const database = quoteIdent(settings.database);
  if (settings.charset?.toLowerCase() !== "utf8mb4")
    throw new InvalidArgumentError(
      "$.database",
      `the database ${database} has the default character set ${settings.charset ?? "unknown"}, and the ledger's tables take it: it must be utf8mb4 (event bodies hold any Unicode text). Run ALTER DATABASE ${database} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin, or give the store a database created with it`,
    );
  if (settings.engine?.toLowerCase() !== "innodb")
    throw new InvalidArgumentError(
      path,
      `the connection's default_storage_engine is ${settings.engine ?? "unknown"}: the ledger's tables must be InnoDB (transactions, durable commits). Set default_storage_engine = InnoDB for the store's connections (or the server)`,
    );
}

/** The tables the shipped migrations create, by name. */
function ledgerTables(): string[] {
  return loadMigrations("mysql").flatMap((migration) =>
    migration.statements.flatMap((statement) => {
      const name = /^CREATE TABLE `([^`]+)`/.exec(statement)?.[1];
      return name === undefined ? [] : [name];
    }),
  );
}

/**
 * Refuses a ledger (or the start of one a killed migrator left) whose tables are not InnoDB
 * tables of utf8mb4 text, as found in information_schema: a table converted to latin1, or made
 * under another default engine, would lose characters or atomicity on every write after. Each
 * problem comes with the statement that fixes it.
 */
export async function checkLedgerTables(
  connection: mysql.PoolConnection,
  database: string,
): Promise<void> {
  const names = ledgerTables();
  const [tables] = (await connection.query(
    own(
      "SELECT t.table_name AS name, t.engine AS engine, c.character_set_name AS charset FROM information_schema.tables t LEFT JOIN information_schema.collations c ON c.collation_name = t.table_collation WHERE t.table_schema = DATABASE() AND t.table_name IN (?)",
    ),
    [names],
  )) as unknown as [{ name: string; engine: string | null; charset: string | null }[]];
  if (tables.length === 0) return;
  const [columns] = (await connection.query(
    own(
      "SELECT table_name AS name, column_name AS columnName, character_set_name AS charset FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name IN (?) AND character_set_name IS NOT NULL AND character_set_name <> 'utf8mb4'",
    ),
    [names],
  )) as unknown as [{ name: string; columnName: string; charset: string }[]];
  const problems: string[] = [];
  const fixes: string[] = [];
  for (const table of tables) {
    const qualified = `${quoteIdent(database)}.${quoteIdent(table.name)}`;
    if (table.engine?.toLowerCase() !== "innodb") {
      problems.push(`${table.name} is ${table.engine ?? "not a table"}`);
      fixes.push(`ALTER TABLE ${qualified} ENGINE=InnoDB`);
    }
    const text = columns.filter((column) => column.name === table.name);
    // The table's default matters too: a later migration's new column takes it.
    const tableCharset = table.charset?.toLowerCase();
    if (text.length > 0 || (tableCharset !== undefined && tableCharset !== "utf8mb4")) {
      const found = text.map((column) => `column ${column.columnName} ${column.charset}`);
      problems.push(
        `${table.name} is not utf8mb4 (${found.length > 0 ? found.join(", ") : `default ${table.charset}`})`,
      );
      fixes.push(`ALTER TABLE ${qualified} CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    }
  }
  if (problems.length > 0)
    throw new InvalidArgumentError(
      "$.database",
      `the ledger's tables in ${quoteIdent(database)} must be InnoDB tables of utf8mb4 text, and ${problems.join("; ")}: the store writes nothing to them. Run ${fixes.join("; ")} (text already stored as '?' stays so)`,
    );
}
