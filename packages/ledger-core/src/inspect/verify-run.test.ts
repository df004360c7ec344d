import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { decodeBody, encodeBody } from "../stores/sqlite/body-codec.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { assertRunIntact, verifyRun } from "./verify-run.js";

const dir = scratchDirectory("agent-ledger-verify-", afterAll);

async function recordRun(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  const call = await recorder.beforeToolCall({
    toolCallId: "t1",
    name: "transfer",
    args: { amount: 100 },
  });
  await recorder.toolCompleted(call, { transferred: 100 });
  await recorder.completeRun("done");
  await store.close();
}

describe("verifyRun on a SQLite file edited behind the ledger's back", () => {
  it("reports an intact run as ok", async () => {
    const path = join(dir, "intact.db");
    await recordRun(path);
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toEqual({ ok: true, length: 4 });
    // A mistyped run or session is not an intact run.
    await expect(verifyRun(store, { sessionId: "s", runId: "R" })).rejects.toMatchObject({
      code: "not-found",
    });
    await expect(assertRunIntact(store, { sessionId: "t", runId: "r" })).rejects.toMatchObject({
      code: "not-found",
    });
    await store.close();
  });

  it("reports an edited payload as tamper-detected at its seq", async () => {
    const path = join(dir, "edited.db");
    await recordRun(path);
    const raw = new Database(path);
    // A long body is stored compressed (body-codec.ts): edit the JSON, store it the same way.
    const row = raw.prepare("SELECT body FROM events WHERE seq = 1").get() as { body: unknown };
    const json = decodeBody(row.body);
    expect(json).toContain('"amount":100');
    const changed = raw
      .prepare("UPDATE events SET body = ? WHERE seq = 1")
      .run(encodeBody(json.replace('"amount":100', '"amount":1000')));
    expect(changed.changes).toBe(1);
    raw.close();
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({
      ok: false,
      badSeq: 1,
    });
    await expect(assertRunIntact(store, { sessionId: "s", runId: "r" })).rejects.toMatchObject({
      code: "tamper-detected",
      badSeq: 1,
    });
    await store.close();
  });

  it("reports a deleted last event (the head no longer matches)", async () => {
    const path = join(dir, "truncated.db");
    await recordRun(path);
    const raw = new Database(path);
    raw.prepare("DELETE FROM events WHERE seq = 3").run();
    raw.close();
    const store = new SqliteEventStore({ path });
    await store.init();
    expect(await verifyRun(store, { sessionId: "s", runId: "r" })).toMatchObject({
      ok: false,
      badSeq: 3,
    });
    await store.close();
  });
});
