import { afterAll, describe, it } from "vitest";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkRaceOutcome, runAppendRace } from "../sql/testing/race-check.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const places = freshPlaces(afterAll);

const writers = 8;
const perWriter = 25;

describe.skipIf(!available)("PostgresEventStore across processes", () => {
  for (const sharedRun of [true, false]) {
    it(`8 processes append to ${sharedRun ? "one run" : "separate runs"} while a reader tails, each also sending batches that must be refused whole`, async () => {
      // A schema nobody created yet: the children also race on init().
      const schema = places.schema("race");
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
