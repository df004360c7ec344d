import { randomUUID } from "node:crypto";
import { SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import pg from "pg";
import { afterAll, describe, expect } from "vitest";
import { describeCliCommands } from "./cli-suite.test.data.js";

const available = await serverAvailable("postgres");
// Its own schema (named in the URL, as a user's CLI reaches a ledger kept in one), dropped after.
const schema = `cli_${randomUUID().replaceAll("-", "")}`;
const storeUrl = `${SERVER_URLS.postgres}${SERVER_URLS.postgres.includes("?") ? "&" : "?"}schema=${schema}`;

afterAll(async () => {
  if (!available) return;
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
});

describe.skipIf(!available)("PostgreSQL", () => {
  describeCliCommands({
    name: "PostgreSQL",
    storeUrl,
    sessionId: `cli-pg-${randomUUID()}`,
    async tamper({ sessionId, runId, seq }) {
      const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
      await client.connect();
      try {
        const result = await client.query(
          `UPDATE "${schema}".events SET body = replace(body, 'Book a table', 'Book a TABLE') WHERE session_id = $1 AND run_id = $2 AND seq = $3`,
          [sessionId, runId, seq],
        );
        expect(result.rowCount).toBe(1);
      } finally {
        await client.end();
      }
    },
  });
});
