import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { loadMigrations } from "../sql/migrations.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const schema = `ledger_listing_${uuidv7().replaceAll("-", "")}`;
const admin = available ? new pg.Client({ connectionString: SERVER_URLS.postgres }) : undefined;
await admin?.connect();
afterAll(async () => {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}_old" CASCADE`);
  await admin?.end();
});

/** A node of `EXPLAIN (FORMAT JSON)`'s plan. */
interface PlanNode {
  "Node Type": string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** The statements a store sends through `pool`, as sent (text and parameters). */
function recordStatements(pool: pg.Pool): { text: string; values: unknown[] }[] {
  const sent: { text: string; values: unknown[] }[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  Object.assign(pool, {
    query: (config: unknown, values?: unknown[], ...rest: unknown[]) => {
      const text = typeof config === "string" ? config : (config as { text: string }).text;
      sent.push({ text, values: values ?? (config as { values?: unknown[] }).values ?? [] });
      return query(config, values, ...rest);
    },
  });
  return sent;
}

/** The index migration (0006) by its place in the journal. */
const indexVersion = loadMigrations("postgres").find(
  (migration) => migration.tag === "0006_sessions_code_point",
)?.version;

async function indexOid(on: string): Promise<number | undefined> {
  const found = await (admin as pg.Client).query<{ oid: number }>(
    "SELECT to_regclass($1)::oid AS oid",
    [`"${on}".sessions_code_point`],
  );
  return found.rows[0]?.oid ?? undefined;
}

describe.skipIf(!available)("PostgresEventStore.listSessions on many sessions", () => {
  it("reads a page through the index in code-point order: no scan of the table, no sort", async () => {
    const pool = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 2 });
    const sent = recordStatements(pool);
    const store = new PostgresEventStore({ pool, schema });
    try {
      await store.init();
      // 20,000 sessions (one row each; their events do not matter to the listing), analysed:
      // the planner then costs a page against the whole table, as on a large ledger.
      await admin?.query(
        `INSERT INTO "${schema}".sessions (session_id, last_cursor, created_at, updated_at)
         SELECT 'session-' || md5(n::text), 1, 'then', 'then' FROM generate_series(1, 20000) AS n`,
      );
      await admin?.query(`ANALYZE "${schema}".sessions`);
      sent.length = 0;
      const page = await store.listSessions({ after: "session-8", limit: 500 });
      expect(page.sessions).toHaveLength(500);
      const ids = page.sessions.map((session) => session.sessionId);
      expect(ids.every((id) => id > "session-8")).toBe(true);
      expect(ids).toEqual([...ids].sort());

      // The listing statement the store sent, explained with its parameters.
      const listing = sent.find((statement) => statement.text.includes('collate "C"'));
      expect(listing).toBeDefined();
      const { text, values } = listing as { text: string; values: unknown[] };
      const explained = await (admin as pg.Client).query<{ "QUERY PLAN": { Plan: PlanNode }[] }>(
        `EXPLAIN (FORMAT JSON) ${text}`,
        values,
      );
      const plan = explained.rows[0]?.["QUERY PLAN"][0]?.Plan as PlanNode;
      const nodes = nodesOf(plan);
      expect(nodes.map((node) => node["Node Type"])).not.toContain("Sort");
      expect(nodes.map((node) => node["Node Type"])).not.toContain("Seq Scan");
      expect(nodes.find((node) => node["Node Type"] === "Index Scan")?.["Index Name"]).toBe(
        "sessions_code_point",
      );
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it("a ledger of the previous release gets the index on init; one built beforehand is kept", async () => {
    const old = `${schema}_old`;
    const open = () =>
      new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema: old });
    const first = open();
    await first.init();
    await first.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    await first.close();
    expect(await indexOid(old)).toBeDefined();
    // What the previous release left: no index, the version before it.
    const previous = async () => {
      await admin?.query(`DROP INDEX "${old}".sessions_code_point`);
      await admin?.query(`DELETE FROM "${old}".schema_version WHERE version >= $1`, [indexVersion]);
    };
    await previous();
    expect(await indexOid(old)).toBeUndefined();
    // Two processes start on it at once: one migrates, the other finds it done.
    const racing = [open(), open()];
    await Promise.all(racing.map((store) => store.init()));
    expect(await indexOid(old)).toBeDefined();
    const definition = await admin?.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = 'sessions_code_point'",
      [old],
    );
    expect(definition?.rows[0]?.indexdef).toContain('COLLATE "C"');
    expect((await racing[0]?.listSessions())?.sessions.map((session) => session.sessionId)).toEqual(
      ["s"],
    );
    await Promise.all(racing.map((store) => store.close()));

    // An operator built it beforehand without holding appends (migration 0006 says how).
    await previous();
    await admin?.query(
      `CREATE INDEX CONCURRENTLY sessions_code_point ON "${old}".sessions (session_id COLLATE "C")`,
    );
    const built = await indexOid(old);
    const upgraded = open();
    await upgraded.init();
    await upgraded.close();
    expect(await indexOid(old)).toBe(built);
    const versions = await admin?.query(
      `SELECT max(version) AS version FROM "${old}".schema_version`,
    );
    expect(versions?.rows[0]?.version).toBe(loadMigrations("postgres").length);
  });
});
