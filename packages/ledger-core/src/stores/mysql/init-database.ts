import { noLedgerError } from "../../events/errors.js";
import type { InitOptions } from "../../store/event-store.js";
import { refusedConfiguration } from "../server-refusal.js";
import { assertNoUpgrade, MIGRATION_WAIT_MS, migrationTimeoutMs } from "../sql/migrations.js";
import { driverError } from "../sql/sql-backend.js";
import type { MysqlBackendState } from "./backend-state.js";
import { boundedConnection, checkout, destroyConnection } from "./bounded.js";
import { assertLedgerVersionTable } from "./foreign-tables.js";
import { hasLedger, ledgerVersion, migrateMysql } from "./mysql-migrate.js";
import { own } from "./own-query.js";
import { canRunBlocks } from "./server-limits.js";
import {
  checkSessionSettings,
  SESSION_SETTINGS_QUERY,
  type SessionSettings,
} from "./session-settings.js";
import { quoteIdent, readStorageSettings } from "./storage-settings.js";

/**
 * `MysqlBackend.init`: checks the session's settings, migrates the tables under a lock that
 * keeps other processes' migrations apart, then asks what the server can run. A server that
 * refused the store's database, credentials or TLS is told as such (refusedConfiguration).
 */
export async function initDatabase(state: MysqlBackendState, options?: InitOptions): Promise<void> {
  try {
    await initOnce(state, options);
  } catch (error) {
    const path = state.owned ? "$.uri" : "$.pool";
    throw (
      refusedConfiguration(error, { location: state.location, path, create: options?.create }) ??
      error
    );
  }
}

async function initOnce(state: MysqlBackendState, options?: InitOptions): Promise<void> {
  const pooled = await checkout(state.pool, state.timeoutMs);
  const connection = boundedConnection(pooled, state.timeoutMs);
  // Waiting for another process's migration, and each statement of one, may take minutes.
  const migrating =
    state.timeoutMs === 0 ? pooled : boundedConnection(pooled, migrationTimeoutMs(state.timeoutMs));
  try {
    // The application's pool may bound its statements (MariaDB's max_statement_time): a
    // migration of a large database, or the wait for another process's, is no such query.
    await connection.query(own("SET SESSION max_statement_time = 0")).catch((error: unknown) => {
      // MySQL has no such variable (its max_execution_time bounds SELECTs only).
      if (driverError(error).errno !== 1193) throw error;
    });
    // The shipped SQL names tables without a database: run it in the store's database. The
    // connection is never reused (below), whatever its default database is then.
    if (state.database !== undefined)
      await connection.query(own(`USE ${quoteIdent(state.database)}`));
    const [current] = (await connection.query(own(SESSION_SETTINGS_QUERY))) as unknown as [
      SessionSettings[],
    ];
    const path = state.owned ? "$.uri" : "$.pool";
    checkSessionSettings(current[0], connection, path);
    // Before its rows are read as the ledger's versions, whatever the options.
    await assertLedgerVersionTable(connection, path);
    if (options?.create === false && !(await hasLedger(connection)))
      throw noLedgerError(state.location, "the database has no agent-ledger tables");
    // Before the migration lock and any DDL, as migrateMysql would find it.
    if (options?.upgrade === false)
      assertNoUpgrade("mysql", await ledgerVersion(connection), state.location);
    const storage = await readStorageSettings(connection);
    const lockName = `agent-ledger:migrate:${current[0]?.name ?? ""}`.slice(0, 64);
    const waitSeconds = MIGRATION_WAIT_MS / 1000;
    const [locked] = (await migrating.query(own("SELECT GET_LOCK(?, ?) AS got"), [
      lockName,
      waitSeconds,
    ])) as unknown as [{ got: number | null }[]];
    if (locked[0]?.got !== 1)
      throw new Error(
        `another process held the migration lock ${lockName} for ${waitSeconds} s (still migrating, or stuck)`,
      );
    try {
      // MySQL commits DDL implicitly: the lock, not a transaction, keeps migrators apart.
      await migrateMysql(migrating, storage, path, state.location);
    } finally {
      // A connection that failed (or timed out) cannot release it, and need not: the lock goes
      // with the connection, destroyed below. Its error would hide the one that matters.
      await connection.query(own("SELECT RELEASE_LOCK(?)"), [lockName]).catch(() => {});
    }
    state.storage = storage;
  } finally {
    // Never back to the pool: its session settings and default database were changed. (One
    // that timed out was destroyed already, socket and all.)
    destroyConnection(pooled, { graceful: true });
  }
  // Known from the first append on: on MySQL no append is planned for a path it lacks.
  await canRunBlocks(state);
}
