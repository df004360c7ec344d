import { closeSync, openSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { SqliteEventStore } from "./sqlite-store.js";

// A malformed file is not an outage: retrying never mends it, and a monitor that retries
// `store-unavailable` (exit 4 in the CLI) would wait on it for good.
describe("SQLite on a damaged file", () => {
  const folder = scratchDirectory("agent-ledger-damaged-", { beforeAll, afterAll });

  it("is tamper-detected, saying the database is damaged and what to do, not store-unavailable", async () => {
    const path = join(folder, "damaged.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    for (let index = 0; index < 200; index++)
      await recorder.recordInput({ index, text: "x".repeat(300) });
    await recorder.completeRun("done");
    await store.close();
    const database = new Database(path);
    database.pragma("wal_checkpoint(TRUNCATE)");
    database.close();
    // Every third page past the schema overwritten: what a lost or torn write leaves.
    const pages = statSync(path).size / 4096;
    const file = openSync(path, "r+");
    for (let page = 4; page < pages - 2; page += 3)
      writeSync(file, Buffer.alloc(4096, 0xa5), 0, 4096, page * 4096);
    closeSync(file);

    const reopened = new SqliteEventStore({ path });
    const failure = await reopened
      .init()
      .then(() => reopened.readSession({ sessionId: "s" }))
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failure).toMatchObject({ code: "tamper-detected" });
    expect(String((failure as Error).message)).toContain("the database is damaged");
    expect(String((failure as Error).message)).toContain("restore the file from a backup");
    await reopened.close();
  });
});
