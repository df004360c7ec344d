import { randomUUID } from "node:crypto";
import { SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { describeCliCommands } from "./cli-suite.test.data.js";
import { runBin } from "./session-fixture.test.data.js";

const available = await serverAvailable("postgres");
// Its own schema (named in the URL, as a user's CLI reaches a ledger kept in one), dropped after.
const schema = `cli_${randomUUID().replaceAll("-", "")}`;
const inSchema = (name: string) =>
  `${SERVER_URLS.postgres}${SERVER_URLS.postgres.includes("?") ? "&" : "?"}schema=${name}`;
const storeUrl = inSchema(schema);
/** A role that may only read the ledger's schema (made once the ledger is there). */
const reader = `ro_${randomUUID().replaceAll("-", "")}`;
const readerUrl = (() => {
  const url = new URL(storeUrl);
  url.username = reader;
  url.password = "reader-pw";
  return url.toString();
})();

async function query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  if (!available) return;
  await query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await query(`DROP SCHEMA IF EXISTS "${schema}_none" CASCADE`);
  await query(`DROP ROLE IF EXISTS "${reader}"`);
});

describeCliCommands({
  skip: !available,
  name: "PostgreSQL",
  storeUrl,
  sessionId: `cli-pg-${randomUUID()}`,
  async tamper({ sessionId, runId, seq }) {
    const result = await query(
      `UPDATE "${schema}".events SET body = replace(body, 'Book a table', 'Book a TABLE') WHERE session_id = $1 AND run_id = $2 AND seq = $3`,
      [sessionId, runId, seq],
    );
    expect(result.rowCount).toBe(1);
  },
  readOnly: {
    storeUrl: readerUrl,
    refusal: /append failed: permission denied for table/,
    async grant() {
      await query(`CREATE ROLE "${reader}" LOGIN PASSWORD 'reader-pw'`);
      await query(`GRANT USAGE ON SCHEMA "${schema}" TO "${reader}"`);
      await query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${reader}"`);
    },
  },
  refused: {
    noDatabase: (() => {
      const url = new URL(storeUrl);
      url.pathname = `/${schema}_missing`;
      return url.toString();
    })(),
    badCredentials: (() => {
      const url = new URL(storeUrl);
      url.username = `no_${reader}`;
      url.password = "wrong-pw";
      return url.toString();
    })(),
  },
  noLedger: {
    storeUrl: inSchema(`${schema}_none`),
    leftovers: async () =>
      (await query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [`${schema}_none`])).rowCount ??
      0,
  },
});

describe.skipIf(!available)("agent-ledger on a PostgreSQL URL that names no schema", () => {
  it("says how to name the schema a ledger is kept in, when the public schema has none", async () => {
    // A database of its own: its public schema surely holds no ledger.
    const database = `cli_${randomUUID().replaceAll("-", "")}`;
    await query(`CREATE DATABASE "${database}"`);
    try {
      const url = new URL(SERVER_URLS.postgres);
      url.pathname = `/${database}`;
      for (const [args, env, from] of [
        [["--store", url.toString(), "sessions"], {}, "--store"],
        [["sessions"], { AGENT_LEDGER_STORE: url.toString() }, "$AGENT_LEDGER_STORE"],
      ] as const) {
        const result = await runBin([...args], env);
        expect(result.code, result.stderr).toBe(3);
        expect(result.stderr).toContain(`schema public has no agent-ledger tables (from ${from})`);
        expect(result.stderr).toContain("another schema: add ?schema=<name> to the URL");
      }
      // A URL that names its schema is told only to check it.
      url.searchParams.set("schema", "elsewhere");
      const named = await runBin(["--store", url.toString(), "sessions"]);
      expect(named.code, named.stderr).toBe(3);
      expect(named.stderr).not.toContain("?schema=<name>");
    } finally {
      await query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  });
});
