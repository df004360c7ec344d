import type { InitOptions } from "../../store/event-store.js";
import { assertNoUpgrade, MIGRATION_WAIT_MS, pendingMigrations } from "../sql/migrations.js";
import type { SqliteBackendState } from "./backend-state.js";

/** The highest migration the file records; 0 for a file without the ledger's tables. */
function schemaVersion(state: SqliteBackendState): number {
  const database = state.database;
  const table = database
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
    .get();
  if (!table) return 0;
  const row = database.prepare("SELECT max(version) AS v FROM schema_version").get() as {
    v: number | null;
  };
  return Number(row.v ?? 0);
}

/**
 * Applies the pending migrations in one transaction. BEGIN IMMEDIATE takes the write lock
 * before reading the version: a process that starts at the same time waits (busy timeout),
 * then sees the migrations already applied.
 */
function migrate(state: SqliteBackendState): void {
  const database = state.database;
  database
    .transaction(() => {
      for (const migration of pendingMigrations("sqlite", schemaVersion(state), state.location)) {
        for (const statement of migration.statements) database.exec(statement);
        database
          .prepare("INSERT INTO schema_version (version, tag, applied_at) VALUES (?, ?, ?)")
          .run(migration.version, migration.tag, new Date().toISOString());
      }
    })
    .immediate();
}

/** `SqliteBackend.init`: WAL, then the pending migrations, waiting for another process's. */
export async function initDatabase(
  state: SqliteBackendState,
  options?: InitOptions,
): Promise<void> {
  if (options?.create === false) state.connection.assertLedger(() => schemaVersion(state));
  // Before anything is written to the file (WAL included).
  if (options?.upgrade === false) assertNoUpgrade("sqlite", schemaVersion(state), state.location);
  // Busy timeout first (set on opening): switching to WAL takes a lock another process may
  // hold. A no-op on a ledger, which is in WAL from its first init.
  state.database.pragma("journal_mode = WAL");
  const deadline = Date.now() + MIGRATION_WAIT_MS;
  for (;;) {
    // A read takes no lock (WAL): a file already at this version is settled, and a newer
    // one refused, without waiting for whoever holds the write lock.
    if (pendingMigrations("sqlite", schemaVersion(state), state.location).length === 0) return;
    try {
      migrate(state);
      return;
    } catch (error) {
      // The write lock stayed taken past the busy timeout while the file is still behind:
      // another process is migrating a large file. Wait for it (it may do ours).
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
