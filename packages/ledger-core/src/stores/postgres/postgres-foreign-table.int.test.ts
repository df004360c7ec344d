import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../store/open-store.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { PostgresEventStore } from "./postgres-store.js";

// Another application's table of a name the ledger uses, in the schema the store names: init()
// must say so (a configuration to change), not store-unavailable (a server to wait for).

const available = await serverAvailable("postgres");
const places = freshPlaces(afterAll);
const admin = available
  ? new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 1 })
  : undefined;
afterAll(async () => {
  await admin?.end();
});

/** The test server's URL naming `name` as the ledger's schema. */
const withSchema = (name: string) =>
  `${SERVER_URLS.postgres}${SERVER_URLS.postgres.includes("?") ? "&" : "?"}schema=${name}`;

/** The relations of `schema`, by name. */
async function relationsOf(schema: string): Promise<string[]> {
  const found = await (admin as pg.Pool).query<{ name: string }>(
    "SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 ORDER BY 1",
    [schema],
  );
  return found.rows.map((row) => row.name);
}

/** The functions of `schema`, each with its arguments and body. */
async function functionsOf(schema: string): Promise<string[]> {
  const found = await (admin as pg.Pool).query<{ function: string }>(
    "SELECT p.oid::regprocedure::text || ' ' || p.prosrc AS function FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1 ORDER BY 1",
    [schema],
  );
  return found.rows.map((row) => row.function);
}

describe.skipIf(!available)(
  "PostgresEventStore on a schema holding another application's table",
  () => {
    it("refuses connect-pg-simple's session table of the ledger's name, naming it and ?schema=", async () => {
      const schema = places.schema("foreign");
      await (admin as pg.Pool).query(`CREATE SCHEMA "${schema}"`);
      await (admin as pg.Pool).query(
        `CREATE TABLE "${schema}".sessions (sid varchar NOT NULL PRIMARY KEY, sess json NOT NULL, expire timestamp(6) NOT NULL)`,
      );
      const before = await relationsOf(schema);
      await expect(openStore(withSchema(schema))).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
        message: expect.stringMatching(/relation sessions .*\?schema=/),
      });
      const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
      try {
        await expect(store.init()).rejects.toMatchObject({
          code: "invalid-argument",
          path: "$.schema",
          details: { relation: "sessions" },
        });
      } finally {
        await store.close();
      }
      expect(await relationsOf(schema)).toEqual(before);
    });

    it("refuses another tool's schema_version table (Flyway 4's), not taking it for a ledger's versions", async () => {
      const schema = places.schema("flyway");
      await (admin as pg.Pool).query(`CREATE SCHEMA "${schema}"`);
      await (admin as pg.Pool).query(
        `CREATE TABLE "${schema}".schema_version (installed_rank int PRIMARY KEY, version varchar(50), description varchar(200) NOT NULL)`,
      );
      await (admin as pg.Pool).query(
        `INSERT INTO "${schema}".schema_version VALUES (1, '9', 'init')`,
      );
      const before = await relationsOf(schema);
      for (const create of [true, false])
        await expect(openStore(withSchema(schema), { create })).rejects.toMatchObject({
          code: "invalid-argument",
          path: "$.url",
          message: expect.stringContaining("relation schema_version"),
        });
      expect(await relationsOf(schema)).toEqual(before);
    });

    it("refuses another application's index of a name a later migration gives one of the ledger's", async () => {
      // The migrations that make these indexes open with comment lines: both names were missed,
      // so blob_refs_session failed the CREATE INDEX (told as store-unavailable) and
      // sessions_code_point, made IF NOT EXISTS, was taken as the ledger's own.
      for (const index of ["blob_refs_session", "sessions_code_point"]) {
        const schema = places.schema("index");
        await (admin as pg.Pool).query(`CREATE SCHEMA "${schema}"`);
        await (admin as pg.Pool).query(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY)`);
        await (admin as pg.Pool).query(`CREATE INDEX ${index} ON "${schema}".orders (id)`);
        const before = await relationsOf(schema);
        await expect(openStore(withSchema(schema)), index).rejects.toMatchObject({
          code: "invalid-argument",
          path: "$.url",
          details: { relation: index, schema },
        });
        expect(await relationsOf(schema)).toEqual(before);
      }
    });

    it("refuses another application's function of a name the ledger's migrations give theirs, leaving it as it was", async () => {
      const schema = places.schema("function");
      await (admin as pg.Pool).query(`CREATE SCHEMA "${schema}"`);
      // One of the same arguments (CREATE FUNCTION would fail on it) and one of others (CREATE
      // FUNCTION would add an overload beside it, and the schema would hold both).
      const signatures = [
        "p_session text, p_run text[], p_length integer[], p_status text[], p_last_hash text[], p_expected_length integer[], p_expected_hash text[], p_count integer[], p_now text, p_seq integer[], p_event_id text[], p_event_type text[], p_recorded_at text[], p_body_prefix text[]",
        "p_order integer",
      ];
      for (const [index, name] of [
        "agent_ledger_append_at_heads",
        "agent_ledger_append_blobs_at_heads",
      ].entries())
        await (admin as pg.Pool).query(
          `CREATE FUNCTION "${schema}".${name}(${signatures[index]}) RETURNS integer LANGUAGE sql AS 'SELECT 7'`,
        );
      const before = await functionsOf(schema);
      await expect(openStore(withSchema(schema))).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
        message: expect.stringMatching(/function agent_ledger_append_at_heads .*\?schema=/),
      });
      await (admin as pg.Pool).query(`DROP FUNCTION "${schema}".agent_ledger_append_at_heads`);
      const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
      try {
        await expect(store.init()).rejects.toMatchObject({
          code: "invalid-argument",
          path: "$.schema",
          details: { function: "agent_ledger_append_blobs_at_heads", schema },
        });
      } finally {
        await store.close();
      }
      expect(await functionsOf(schema)).toEqual(before.slice(1));
      expect(await relationsOf(schema)).toEqual([]);
    });

    it("still opens a schema where another application keeps tables of other names", async () => {
      const schema = places.schema("shared");
      await (admin as pg.Pool).query(`CREATE SCHEMA "${schema}"`);
      await (admin as pg.Pool).query(`CREATE TABLE "${schema}".orders (id int PRIMARY KEY)`);
      const store = await openStore(withSchema(schema));
      try {
        await store.append({
          sessionId: "s",
          runId: "r",
          expectedSeq: 0,
          events: [{ type: "run.started" }],
        });
      } finally {
        await store.close();
      }
    });
  },
);
