import { afterAll, describe, it } from "vitest";
import { freshPlaces } from "../../testing/fresh-places.js";
import { serverAvailable } from "../../testing/servers.js";
import { checkRaceOutcome, runAppendRace } from "../sql/testing/race-check.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const places = freshPlaces(afterAll);

const writers = 8;
const perWriter = 25;

describe.skipIf(!available)("MysqlEventStore across processes", () => {
  for (const sharedRun of [true, false]) {
    it(`8 processes append to ${sharedRun ? "one run" : "separate runs"} while a reader tails, each also sending batches that must be refused whole`, async () => {
      // An empty database: the children also race on init().
      const { url } = await places.database("race").create();
      const reader = new MysqlEventStore({ uri: url });
      try {
        const outcome = await runAppendRace({
          target: { kind: "mysql", location: url },
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
