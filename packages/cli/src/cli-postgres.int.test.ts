import { randomUUID } from "node:crypto";
import { SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import pg from "pg";
import { describe, expect } from "vitest";
import { describeCliCommands } from "./cli-suite.test.data.js";

const available = await serverAvailable("postgres");

describe.skipIf(!available)("PostgreSQL", () => {
  describeCliCommands({
    name: "PostgreSQL",
    storeUrl: SERVER_URLS.postgres,
    sessionId: `cli-pg-${randomUUID()}`,
    async tamper({ sessionId, runId, seq }) {
      const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
      await client.connect();
      try {
        const result = await client.query(
          "UPDATE events SET body = replace(body, 'Book a table', 'Book a TABLE') WHERE session_id = $1 AND run_id = $2 AND seq = $3",
          [sessionId, runId, seq],
        );
        expect(result.rowCount).toBe(1);
      } finally {
        await client.end();
      }
    },
  });
});
