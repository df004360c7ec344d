import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { runBin } from "../session-fixture.test.data.js";

describe("agent-ledger inspect", () => {
  it("still shows what was in flight when a blob an event names is missing", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "agent-ledger-inspect-")), "ledger.db");
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "lost-blob",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    // A long message text is kept in the blob store, the event names it.
    const content = "Refund order 42. ".repeat(200);
    await recorder.beforeModelCall({
      request: { model: "m", messages: [{ role: "user", content }] },
    });
    await store.close();
    const database = new Database(path);
    expect(database.prepare("DELETE FROM blobs").run().changes).toBeGreaterThan(0);
    database.close();

    const result = await runBin(["--store", `sqlite:${path}`, "inspect", "lost-blob"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("UNRESOLVED");
    expect(result.stderr).toMatch(
      /warning: blob sha256:[0-9a-f]{64} named by an event is not in the store/,
    );
    const json = await runBin(["--store", `sqlite:${path}`, "inspect", "lost-blob", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).unresolved).toHaveLength(1);
  });
});
