import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { checkRaceOutcome, runAppendRace } from "../sql/testing/race-check.js";
import { SqliteEventStore } from "./sqlite-store.js";

const folder = scratchDirectory("ledger-sqlite-race-", { beforeAll, afterAll });

const writers = 8;
const perWriter = 25;

describe("SqliteEventStore across processes", () => {
  for (const sharedRun of [true, false]) {
    it(`8 processes append to ${sharedRun ? "one run" : "separate runs"} while a reader tails, each also sending batches that must be refused whole`, async () => {
      // The file does not exist yet: the children also race on init().
      const path = join(folder, `race-${sharedRun ? "shared" : "separate"}.db`);
      const reader = new SqliteEventStore({ path });
      try {
        const outcome = await runAppendRace({
          target: { kind: "sqlite", location: path },
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
