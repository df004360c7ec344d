import type pg from "pg";
import { noLedgerError } from "../../events/errors.js";
import type { InitOptions } from "../../store/event-store.js";
import { refusedConfiguration } from "../server-refusal.js";
import { ServerTimeoutError } from "../server-timeout.js";
import { assertNoUpgrade, migrationTimeoutMs, pendingMigrations } from "../sql/migrations.js";
import { driverError } from "../sql/sql-backend.js";
import type { PostgresBackendState } from "./backend-state.js";
import { boundedQuery } from "./bounded-pool.js";
import {
  assertLedgerVersionTable,
  assertNoForeignFunctions,
  assertNoForeignRelations,
} from "./foreign-relations.js";
import { quoteIdent } from "./quote-ident.js";
import { inTransaction } from "./transaction.js";

/**
 * What a migration that lost a race to another process's (see initDatabase) hits:
 * unique_violation in a catalog, duplicate_schema, duplicate_table, duplicate_object,
 * duplicate_function.
 */
const catalogRaceCodes: ReadonlySet<string> = new Set([
  "23505",
  "42P06",
  "42P07",
  "42710",
  "42723",
]);

/** `PostgresBackend.init`: migrates the schema in one transaction, run again on a lost race. */
export async function initDatabase(
  state: PostgresBackendState,
  options?: InitOptions,
): Promise<void> {
  // A transaction that waited on the migration lock may still see the catalog as it was
  // before it waited: an advisory lock, unlike a table lock, does not make the backend read
  // the catalog changes committed meanwhile. Two inits of a new schema at once on connections
  // that had run an init before failed the second with "duplicate key value violates unique
  // constraint pg_namespace_nspname_index" (CREATE SCHEMA IF NOT EXISTS trusting a stale
  // cache). A new transaction reads them, so the loser of that race runs once more and finds
  // the ledger made.
  for (let attempt = 1; ; attempt++) {
    try {
      return await initOnce(state, options);
    } catch (error) {
      const code = driverError(error).code;
      if (attempt === 3 || code === undefined || !catalogRaceCodes.has(code))
        // A server that refused the store's database, credentials or TLS: told as such.
        throw (
          refusedConfiguration(error, {
            location: state.location,
            path: state.owned ? "$.connectionString" : "$.pool",
            create: options?.create,
          }) ?? error
        );
    }
  }
}

async function initOnce(state: PostgresBackendState, options?: InitOptions): Promise<void> {
  await inTransaction(state, async (client) => {
    const schema = quoteIdent(state.schema);
    // The application's pool may bound its queries (statement_timeout, lock_timeout): a
    // migration of a large schema is no such query, and a process starting meanwhile must
    // wait for it rather than fail. For this transaction only.
    await client.query("SET LOCAL statement_timeout = 0");
    await client.query("SET LOCAL lock_timeout = 0");
    // Only "on" (or a stricter remote_*) makes a commit durable against a server crash; an
    // application may turn it off for its own pool. Reported by describe(), as Redis does.
    const durability = await client.query<{ synchronous_commit: string }>(
      "SHOW synchronous_commit",
    );
    state.synchronousCommit = durability.rows[0]?.synchronous_commit ?? "unknown";
    const found = await ledgerVersion(client, state);
    if (found === undefined && options?.create === false)
      throw noLedgerError(state.location, `schema ${state.schema} has no agent-ledger tables`);
    if (found === undefined) await assertNoForeignRelations(client, state.schema, state.schemaPath);
    // Before the lock and any DDL: a role that may only read an older ledger is told it is
    // older, not refused a lock or a CREATE it was never meant to take.
    if (options?.upgrade === false) assertNoUpgrade("postgres", found ?? 0, state.location);
    // A ledger at this version needs no lock and no DDL, so a role that may only read it (an
    // on-call person's credentials) opens it too. A newer one is refused here.
    if (found !== undefined && pendingMigrations("postgres", found, state.location).length === 0)
      return;
    // One migrator at a time per schema; the lock is released at COMMIT. Waiting for another
    // process's migration, and each statement of one, may take minutes: bounded longer than
    // the store's other waits (node-postgres' query_timeout per query wins over the pool's).
    const bound = migrationTimeoutMs(state.timeoutMs);
    await migrate(client, state, schema, bound);
  });
}

/**
 * A statement of the migration, within `bound`: a node-postgres "Query read timeout" is told
 * with that bound (the migration's, not the store's shorter one an error would otherwise name).
 */
export async function migrationStatement(
  client: pg.PoolClient,
  statement: { text: string; values?: unknown[] },
  bound: number,
): Promise<void> {
  try {
    await client.query(boundedQuery(statement, bound));
  } catch (error) {
    if (error instanceof Error && error.message === "Query read timeout")
      throw Object.assign(new ServerTimeoutError("reply", bound), { cause: error });
    throw error;
  }
}

/** Takes the migration lock and applies what the schema lacks, each statement within `bound`. */
async function migrate(
  client: pg.PoolClient,
  state: PostgresBackendState,
  schema: string,
  bound: number,
): Promise<void> {
  await migrationStatement(
    client,
    {
      text: "SELECT pg_advisory_xact_lock(hashtext($1))",
      values: [`agent-ledger:migrate:${state.schema}`],
    },
    bound,
  );
  await migrationStatement(client, { text: `CREATE SCHEMA IF NOT EXISTS ${schema}` }, bound);
  // The shipped SQL names tables without a schema: run it with the store's schema first.
  await client.query(`SET LOCAL search_path TO ${schema}`);
  // Read again under the lock: another process may have migrated meanwhile.
  const current = (await ledgerVersion(client, state)) ?? 0;
  const pending = pendingMigrations("postgres", current, state.location);
  await assertNoForeignFunctions(client, state.schema, pending, state.schemaPath);
  for (const migration of pending) {
    for (const statement of migration.statements)
      await migrationStatement(client, { text: statement }, bound);
    await client.query(
      "INSERT INTO schema_version (version, tag, applied_at) VALUES ($1, $2, $3)",
      [migration.version, migration.tag, new Date().toISOString()],
    );
  }
}

/**
 * The schema's ledger version (its schema_version table's highest), undefined if none; a
 * schema_version table that is not the ledger's is refused (assertLedgerVersionTable).
 */
async function ledgerVersion(
  client: pg.PoolClient,
  state: PostgresBackendState,
): Promise<number | undefined> {
  const schema = quoteIdent(state.schema);
  const table = `${schema}.schema_version`;
  const found = await client.query<{ name: string | null }>("SELECT to_regclass($1) AS name", [
    table,
  ]);
  if (!found.rows[0]?.name) return undefined;
  await assertLedgerVersionTable(client, table, state.schema, state.schemaPath);
  const result = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${schema}.schema_version`,
  );
  return Number(result.rows[0]?.version ?? 0);
}
