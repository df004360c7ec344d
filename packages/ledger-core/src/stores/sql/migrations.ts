import { readFileSync } from "node:fs";
import { StoreUnavailableError } from "../../events/errors.js";

/** One shipped migration: its version (1-based journal position), tag and SQL statements. */
export interface Migration {
  version: number;
  tag: string;
  statements: string[];
}

/**
 * How long `init()` waits for another process's migration before it gives up: a first upgrade
 * of a large ledger (a backfill over every event) takes minutes, and a process that starts
 * meanwhile must wait for it, not fail. (PostgreSQL waits without a bound: its advisory lock
 * is released when the migrator's connection dies, whatever the cause.)
 */
export const MIGRATION_WAIT_MS = 10 * 60_000;

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

/** Migrations still to apply on a database at `current`; refuses a newer database. */
export function pendingMigrations(dialect: MigrationDialect, current: number): Migration[] {
  const migrations = loadMigrations(dialect);
  const latest = migrations.length;
  if (current > latest) {
    throw new StoreUnavailableError(
      `the ${dialect} ledger schema is at version ${current}, newer than this package knows (${latest}): upgrade @agent-ledger/core`,
    );
  }
  return migrations.filter((migration) => migration.version > current);
}
