import type pg from "pg";
import { InvalidArgumentError } from "../../events/errors.js";
import { loadMigrations } from "../sql/migrations.js";

/** The tables and indexes the migrations create, by name (schema_version among them). */
function ledgerRelations(): string[] {
  return loadMigrations("postgres").flatMap((migration) =>
    migration.statements.flatMap((statement) => {
      const name = /^CREATE (?:TABLE|(?:UNIQUE )?INDEX(?: IF NOT EXISTS)?) "([^"]+)"/.exec(
        statement,
      )?.[1];
      return name === undefined ? [] : [name];
    }),
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
  throw new InvalidArgumentError(
    path,
    `schema ${schema} already has a relation ${relation} that agent-ledger did not make (no ledger is there): the ledger needs its tables' names to itself; give it a schema of its own (?schema=agent_ledger in the URL, or the store's schema option). Nothing was written`,
    { details: { relation, schema } },
  );
}
