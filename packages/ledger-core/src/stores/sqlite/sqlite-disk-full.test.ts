import { randomBytes } from "node:crypto";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspectSession } from "../../inspect/inspect-session.js";
import { verifyRun } from "../../inspect/verify-run.js";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { SqliteEventStore } from "./sqlite-store.js";

// A full disk refuses SQLite's transaction before it commits: the store knows nothing was
// written. The agent that had a call's result can record it once space is back, in the same
// process, instead of being told the call already has an outcome (and a person then asked to
// decide a payment whose result the agent held).
describe("SQLite on a full disk", () => {
  const folder = scratchDirectory("agent-ledger-disk-full-", { beforeAll, afterAll });

  it("says an outcome refused for a full disk was not written, and records it once there is room", async () => {
    const database = new Database(join(folder, "full.db"));
    const store = new SqliteEventStore({ database });
    await store.init();
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      actor: { type: "agent", id: "payer" },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: { eur: 5 } });
    // The file may not grow: SQLite's own stand-in for a full disk (SQLITE_FULL).
    const pages = database.pragma("page_count", { simple: true }) as number;
    database.pragma(`max_page_count = ${pages}`);
    // Incompressible: the store compresses what it keeps.
    const receipt = { paid: true, receipt: randomBytes(150_000).toString("hex") };
    const refused = await recorder.toolCompleted(call, receipt).catch((error: unknown) => error);
    expect(refused).toMatchObject({
      code: "store-unavailable",
      nothingWritten: true,
      details: { nothingWritten: true },
    });
    expect(String((refused as Error).message)).toContain("full");
    database.pragma("max_page_count = 1073741823");
    await recorder.toolCompleted(call, receipt);
    await recorder.completeRun("paid");
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
    expect((await verifyRun(store, { sessionId: "s", runId: recorder.runId })).ok).toBe(true);
    await store.close();
    database.close();
  });
});
