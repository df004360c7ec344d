import type pg from "pg";
import { InvalidArgumentError } from "../../events/errors.js";
import { createdTables, loadMigrations, type Migration } from "../sql/migrations.js";

/**
 * The tables and indexes the migrations create, by name (schema_version among them). A
 * statement may open with its comment lines (0004's and 0006's indexes do), so the CREATE is
 * looked for at the start of any line.
 */
function ledgerRelations(): string[] {
  return loadMigrations("postgres").flatMap((migration) =>
    migration.statements.flatMap((statement) => {
      const name = /^CREATE (?:TABLE|(?:UNIQUE )?INDEX(?: IF NOT EXISTS)?) "([^"]+)"/m.exec(
        statement,
      )?.[1];
      return name === undefined ? [] : [name];
    }),
  );
}

/**
 * Refuses a schema_version table the ledger did not make (another tool's, as Flyway 4 names
 * its own), before its rows are read as the ledger's versions (a "version 9" of another tool
 * was refused as a newer release's ledger): the ledger's has exactly the columns its CREATE
 * TABLE gives it. `table` is the schema-qualified name, which exists.
 */
export async function assertLedgerVersionTable(
  client: pg.PoolClient,
  table: string,
  schema: string,
  path: string,
): Promise<void> {
  const found = await client.query<{ name: string }>(
    "SELECT attname AS name FROM pg_attribute WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped ORDER BY attnum",
    [table],
  );
  const columns = found.rows.map((row) => row.name);
  const expected =
    createdTables("postgres").find(({ table }) => table === "schema_version")?.columns ?? [];
  if (columns.join(",") === expected.join(",")) return;
  throw foreignRelation(
    "schema_version",
    schema,
    `its columns are ${columns.join(", ")}, the ledger's ${expected.join(", ")}`,
    path,
  );
}

/**
 * Refuses a schema without a ledger that holds a table or index of a name the ledger's
 * migrations give one of theirs (connect-pg-simple's `sessions`, say): the migration's CREATE
 * would fail on it with "already exists" at every init, which is no outage to wait out but a
 * schema to change. A migration runs in one transaction, so no half-made ledger of ours is ever
 * there. The names are read in one statement, with schema_version among them: a ledger another
 * process committed since this transaction looked (`found` nothing) shows there as a ledger, and
 * its migration is left to the lock. `path` names the option that chose the schema.
 */
export async function assertNoForeignRelations(
  client: pg.PoolClient,
  schema: string,
  path: string,
): Promise<void> {
  const found = await client.query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = ANY($2::text[]) ORDER BY 1",
    [schema, ledgerRelations()],
  );
  const names = found.rows.map((row) => row.name);
  const relation = names[0];
  if (relation === undefined || names.includes("schema_version")) return;
  throw foreignRelation(relation, schema, "no ledger is there", path);
}

/**
 * The functions `migrations` create, by name. A statement may open with its comment lines, so
 * the CREATE is looked for at the start of any line.
 */
function createdFunctions(migrations: Migration[]): string[] {
  return migrations.flatMap((migration) =>
    migration.statements.flatMap((statement) => {
      const name = /^CREATE (?:OR REPLACE )?FUNCTION "?(\w+)"?\s*\(/m.exec(statement)?.[1];
      return name === undefined ? [] : [name];
    }),
  );
}

/**
 * Refuses a schema that holds a function, of any arguments, of a name one of the `pending`
 * migrations gives one of theirs and no applied one gave (another application's own): the
 * migration's CREATE FUNCTION would fail on one of the same arguments ("already exists", told
 * as an outage to wait out) and add an overload beside one of others, leaving the schema with
 * two functions of the name and the other application's calls of it to resolve between them.
 * Run under the migration lock, after the ledger's version was read again: no migration of ours
 * made such a function yet, so whatever holds the name is not ours. A name an applied migration
 * gave is ours, and a pending one may replace that function (0007 replaces 0005's). `path`
 * names the option that chose the schema.
 */
export async function assertNoForeignFunctions(
  client: pg.PoolClient,
  schema: string,
  pending: Migration[],
  path: string,
): Promise<void> {
  const applied = new Set(
    createdFunctions(
      loadMigrations("postgres").filter((migration) => !pending.includes(migration)),
    ),
  );
  const names = createdFunctions(pending).filter((name) => !applied.has(name));
  if (names.length === 0) return;
  const found = await client.query<{ name: string; signature: string }>(
    "SELECT p.proname AS name, p.oid::regprocedure::text AS signature FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 AND p.proname = ANY($2::text[]) ORDER BY 1, 2",
    [schema, names],
  );
  const first = found.rows[0];
  if (first === undefined) return;
  throw new InvalidArgumentError(
    path,
    `schema ${schema} already has a function ${first.name} that agent-ledger did not make (${first.signature}): the ledger needs its functions' names to itself; give it a schema of its own (?schema=agent_ledger in the URL, or the store's schema option). Nothing was written`,
    { details: { function: first.name, signature: first.signature, schema } },
  );
}

function foreignRelation(
  relation: string,
  schema: string,
  why: string,
  path: string,
): InvalidArgumentError {
  return new InvalidArgumentError(
    path,
    `schema ${schema} already has a relation ${relation} that agent-ledger did not make (${why}): the ledger needs its tables' names to itself; give it a schema of its own (?schema=agent_ledger in the URL, or the store's schema option). Nothing was written`,
    { details: { relation, schema } },
  );
}
