import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { scratchDirectory } from "../../testing/scratch-directory.js";
import { SqliteEventStore } from "./index.js";

const dir = scratchDirectory("agent-ledger-sqlite-delete-", { beforeAll, afterAll });
const actor = { type: "agent", id: "a" } as const;
const EMAIL = "erase.me@example.com";
const SECRET = "sk-live-erase0042";

/** The bytes of the database file and of its WAL, if any, as text. */
function rawBytes(path: string): string {
  const wal = `${path}-wal`;
  return readFileSync(path, "latin1") + (existsSync(wal) ? readFileSync(wal, "latin1") : "");
}

describe("a deleted session on SQLite", () => {
  it("leaves none of its content in the file's bytes (free pages are zeroed)", async () => {
    const path = join(dir, "ledger.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    const kept = new SessionRecorder({ store, sessionId: "kept", runId: "r", actor });
    await kept.startRun({ note: "kept" });
    const gone = new SessionRecorder({ store, sessionId: "gone", runId: "r", actor });
    await gone.startRun({ email: EMAIL });
    // Long enough to go to a blob, and an event body kept inline.
    await gone.completeRun({ text: `${SECRET} `.repeat(500), short: SECRET });
    expect(rawBytes(path)).toContain(EMAIL);
    await store.deleteSession("gone", { blobGraceMs: 0 });
    await store.close();
    const bytes = rawBytes(path);
    expect(bytes).not.toContain(EMAIL);
    expect(bytes).not.toContain(SECRET);
  });
});
