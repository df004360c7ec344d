import { randomUUID } from "node:crypto";
import { SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import pg from "pg";
import { afterAll, expect } from "vitest";
import { describeCliCommands } from "./cli-suite.test.data.js";

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
