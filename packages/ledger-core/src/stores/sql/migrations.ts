import { readFileSync } from "node:fs";
import { newerLedgerError, olderLedgerError, StoreUnavailableError } from "../../events/errors.js";
import { MAX_TIMER_MS } from "../server-timeout.js";

/** One shipped migration: its version (1-based journal position), tag and SQL statements. */
export interface Migration {
  version: number;
  tag: string;
  statements: string[];
}

/**
 * How long `init()` waits for another process's migration before it gives up: a first upgrade
 * of a large ledger (a backfill over every event) takes minutes, and a process that starts
 * meanwhile must wait for it, not fail. MySQL's GET_LOCK waits this long on the server;
 * PostgreSQL's advisory lock (released when the migrator's connection dies, whatever the
 * cause) is bounded on the client (migrationTimeoutMs).
 */
export const MIGRATION_WAIT_MS = 10 * 60_000;

/**
 * The bound on the statements of a migration and on the wait for another process's, for a
 * store whose other waits are bounded by `timeoutMs` (0: none): a statement of a migration (a
 * backfill) or the wait for the lock may take MIGRATION_WAIT_MS, and then the reply still has
 * `timeoutMs` to come. Unbounded (the longest timer) when the store sets no bound: a pool's own
 * query timeout is for the application's queries, not for a migration.
 */
export function migrationTimeoutMs(timeoutMs: number): number {
  return timeoutMs === 0 ? MAX_TIMER_MS : Math.min(MIGRATION_WAIT_MS + timeoutMs, MAX_TIMER_MS);
}

export type MigrationDialect = "sqlite" | "postgres" | "mysql";

const cache = new Map<MigrationDialect, Migration[]>();

/**
 * The migrations drizzle-kit generated into `drizzle/<dialect>` (shipped with the package).
 * The stores apply them with their own small migrator, not drizzle's: drizzle's migrator takes
 * no lock, so two processes calling `init()` at once could both apply a migration. Ours runs
 * under a lock (SQLite `BEGIN IMMEDIATE`, PostgreSQL `pg_advisory_xact_lock`, MySQL
 * `GET_LOCK`) and records each version in `schema_version`.
 */
export function loadMigrations(dialect: MigrationDialect): Migration[] {
  const cached = cache.get(dialect);
  if (cached) return cached;
  // Same depth from src/stores/sql and dist/stores/sql: both resolve to <package>/drizzle.
  const folder = new URL(`../../../drizzle/${dialect}/`, import.meta.url);
  let journal: { entries: { idx: number; tag: string }[] };
  try {
    journal = JSON.parse(readFileSync(new URL("meta/_journal.json", folder), "utf8"));
  } catch (error) {
    throw new StoreUnavailableError(`the ${dialect} migrations are missing (${folder})`, error);
  }
  const migrations = [...journal.entries]
    .sort((a, b) => a.idx - b.idx)
    .map((entry) => ({
      version: entry.idx + 1,
      tag: entry.tag,
      statements: readFileSync(new URL(`${entry.tag}.sql`, folder), "utf8")
        .split("--> statement-breakpoint")
        .map((statement) => statement.trim())
        .filter((statement) => statement.length > 0),
    }));
  cache.set(dialect, migrations);
  return migrations;
}

/**
 * Migrations still to apply on a database at `current`; refuses a newer database (a newer
 * release upgraded the ledger at `location`) with newerLedgerError.
 */
export function pendingMigrations(
  dialect: MigrationDialect,
  current: number,
  location: string,
): Migration[] {
  const migrations = loadMigrations(dialect);
  const latest = migrations.length;
  if (current > latest)
    throw newerLedgerError({ location, what: "schema", found: current, reads: latest });
  return migrations.filter((migration) => migration.version > current);
}

/** A table a migration creates (`version`: that migration's), with its columns in order. */
export interface CreatedTable {
  table: string;
  version: number;
  columns: string[];
}

/**
 * The tables the shipped migrations of `dialect` create, each with the columns its CREATE
 * TABLE gives it: what a table of ours looks like, for telling it from another application's
 * of the same name. Drizzle-kit writes one column a line, as a quoted name then its type, and
 * constraints as CONSTRAINT lines, so the names are read from the lines that start quoted.
 */
export function createdTables(dialect: MigrationDialect): CreatedTable[] {
  const quote = dialect === "postgres" ? '"' : "`";
  const create = new RegExp(`^CREATE TABLE ${quote}([^${quote}]+)${quote}`);
  const column = new RegExp(`^\\s*${quote}([^${quote}]+)${quote}`);
  return loadMigrations(dialect).flatMap(({ version, statements }) =>
    statements.flatMap((statement) => {
      const table = create.exec(statement)?.[1];
      if (table === undefined) return [];
      const columns = statement
        .split("\n")
        .slice(1)
        .flatMap((line) => column.exec(line)?.[1] ?? []);
      return [{ table, version, columns }];
    }),
  );
}

/**
 * For `init({ upgrade: false })`: refuses a ledger at `found` that migrations would change (a
 * newer one as pendingMigrations does). 0 is no ledger yet, which is made, not upgraded.
 */
export function assertNoUpgrade(dialect: MigrationDialect, found: number, location: string): void {
  if (found === 0 || pendingMigrations(dialect, found, location).length === 0) return;
  throw olderLedgerError({
    location,
    what: "schema",
    found,
    reads: loadMigrations(dialect).length,
  });
}
