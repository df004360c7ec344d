import { closeSync, openSync, readSync, writeSync } from "node:fs";
import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runBin } from "./session-fixture.test.data.js";

// The hash chain proves the events it reads unchanged; the SQLite store reads a run's head
// through its index. A lost write of an index page (a disk that acknowledged and dropped it)
// reads as an intact, shorter run, and a resume would make its last calls again: verify runs
// SQLite's own check of the file too.
describe("agent-ledger verify on a SQLite file with a damaged index", () => {
  const folder = scratchDirectory("agent-ledger-verify-file-", { beforeAll, afterAll });

  it("says the file is damaged (exit 1), where the chains alone read intact", async () => {
    const path = join(folder, "index.db");
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      runId: "r",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    for (let index = 0; index < 600; index++)
      await recorder.recordInput({ index, text: "x".repeat(40) });
    await store.close();
    const database = new Database(path);
    database.pragma("wal_checkpoint(TRUNCATE)");
    const page = database
      .prepare(
        "SELECT max(pageno) AS page FROM dbstat WHERE name = 'events_run_seq' AND pagetype = 'leaf'",
      )
      .get() as { page: number };
    const pageSize = database.pragma("page_size", { simple: true }) as number;
    database.close();
    // The page's cell count goes back by 40, as if its last write never reached the disk.
    const file = openSync(path, "r+");
    const count = Buffer.alloc(2);
    const at = (page.page - 1) * pageSize + 3;
    readSync(file, count, 0, 2, at);
    count.writeUInt16BE(count.readUInt16BE(0) - 40);
    writeSync(file, count, 0, 2, at);
    closeSync(file);

    const text = await runBin(["--store", `sqlite:${path}`, "verify", "s"]);
    expect(text.code, text.stderr).toBe(1);
    expect(text.stdout).toContain("DAMAGED   the SQLite file");
    expect(text.stdout).toContain("before anyone resumes from it");
    expect(text.stdout).toContain("verify as read, but the file they are read from is damaged");
    const json = await runBin(["--store", `sqlite:${path}`, "verify", "s", "--json"]);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(false);
    expect(report.file.ok).toBe(false);
    expect(report.file.problems.join("\n")).toContain("events_run_seq");
  });

  it("says nothing of the file when it is sound", async () => {
    const path = join(folder, "sound.db");
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "s",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.completeRun("done");
    await store.close();
    const json = await runBin(["--store", `sqlite:${path}`, "verify", "s", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, file: { ok: true, problems: [] } });
  });
});
