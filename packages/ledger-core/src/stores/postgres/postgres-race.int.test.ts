import pg from "pg";
import { afterAll, describe, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkRaceOutcome, runAppendRace } from "../sql/testing/race-check.js";
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

const writers = 8;
const perWriter = 25;

describe.skipIf(!available)("PostgresEventStore across processes", () => {
  for (const sharedRun of [true, false]) {
    it(`8 processes append to ${sharedRun ? "one run" : "separate runs"} while a reader tails, each also sending batches that must be refused whole`, async () => {
      // A schema nobody created yet: the children also race on init().
      const schema = `ledger_race_${uuidv7().replaceAll("-", "")}`;
      schemas.push(schema);
      const reader = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
      try {
        const outcome = await runAppendRace({
          target: { kind: "postgres", location: SERVER_URLS.postgres, schema },
          reader,
          sessionId: "race",
          sharedRun,
          writers,
          perWriter,
        });
        checkRaceOutcome(outcome, { writers, perWriter, sharedRun });
      } finally {
        await reader.close();
      }
    });
  }
});
