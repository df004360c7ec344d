import pg from "pg";
import { afterAll, describe, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const schemas: string[] = [];

afterAll(async () => {
  if (schemas.length === 0) return;
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
});

describe.skipIf(!available)("PostgresEventStore", () => {
  // Each case gets a fresh PostgreSQL schema (created by init()); nothing is skipped.
  runEventStoreConformance(
    () => {
      const schema = `ledger_conf_${uuidv7().replaceAll("-", "")}`;
      schemas.push(schema);
      return new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
    },
    { describe, it },
  );
});
