import { existsSync } from "node:fs";
import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { decodeBody, encodeBody } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeCliCommands } from "./cli-suite.test.data.js";
import { runBin } from "./session-fixture.test.data.js";

const directory = scratchDirectory("agent-ledger-cli-", { beforeAll, afterAll });
const file = join(directory, "ledger.db");

describeCliCommands({
  name: "SQLite",
  storeUrl: `sqlite:${file}`,
  sessionId: "sqlite-demo",
  async tamper({ sessionId, runId, seq }) {
    const database = new Database(file);
    try {
      // A long body is stored compressed: edit its JSON and store it the same way.
      const where = "WHERE session_id = ? AND run_id = ? AND seq = ?";
      const row = database
        .prepare(`SELECT body FROM events ${where}`)
        .get(sessionId, runId, seq) as { body: unknown };
      const json = decodeBody(row.body);
      expect(json).toContain("Book a table");
      const changed = database
        .prepare(`UPDATE events SET body = ? ${where}`)
        .run(encodeBody(json.replace("Book a table", "Book a TABLE")), sessionId, runId, seq);
      expect(changed.changes).toBe(1);
    } finally {
      database.close();
    }
  },
  noLedger: {
    storeUrl: `sqlite:${join(directory, "none.db")}`,
    leftovers: async () => (existsSync(join(directory, "none.db")) ? 1 : 0),
  },
});

describe("agent-ledger errors and exit codes", () => {
  it("prints help with the exit codes", async () => {
    const result = await runBin(["--help"]);
    expect(result.code).toBe(0);
    for (const text of [
      "sessions",
      "inspect",
      "tail",
      "export",
      "verify",
      "resolve",
      "serve",
      "exit codes",
      "AGENT_LEDGER_STORE",
    ])
      expect(result.stdout).toContain(text);
    // No command: a short usage on stderr (one line per command), not the whole help.
    const bare = await runBin([]);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe("");
    const usage = bare.stderr.split("\n");
    expect(usage[0]).toBe("usage: agent-ledger [--store <url>] <command> [options]");
    expect(usage).toContain(
      "  inspect        a session's run tree, its unresolved calls and what to do about them",
    );
    expect(usage).toContain("  collect-blobs  delete the blobs no session references");
    expect(usage.filter((line) => line.startsWith("  "))).toHaveLength(11);
    expect(bare.stderr).toContain("run agent-ledger help <command> for its options");
    expect(usage.length).toBeLessThan(20);
    expect((await runBin(["frobnicate"])).code).toBe(2);
    const badOption = await runBin(["--store", `sqlite:${file}`, "inspect", "x", "--bogus"]);
    expect(badOption.code).toBe(2);
  });

  it("help <command> prints that command's help, as <command> --help does", async () => {
    const help = await runBin(["help", "inspect"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^agent-ledger inspect <session>/);
    expect(help.stdout).toBe((await runBin(["inspect", "--help"])).stdout);
    // A name that is no command (one on Object's prototype too) is bad usage, as it is
    // without `help`: the general help would hide that there is no such command.
    for (const args of [
      ["help", "nosuch"],
      ["help", "constructor"],
      ["help", "inspect", "x"],
    ]) {
      const unknown = await runBin(args);
      expect(unknown.code, args.join(" ")).toBe(2);
      expect(unknown.stdout).toBe("");
      expect(unknown.stderr).toMatch(
        /unknown command "(nosuch|constructor)"|help takes one command/,
      );
    }
  });

  it("exits 2 for a bad store URL", async () => {
    const result = await runBin(["--store", "ftp://example.com/x", "sessions"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad store URL "ftp://example.com/x"');
    const env = await runBin(["sessions"], { AGENT_LEDGER_STORE: "postgres://[bad" });
    expect(env.code).toBe(2);
  });

  it("exits 3 for a missing SQLite file without creating it", async () => {
    const missing = join(directory, "missing.db");
    const result = await runBin(["--store", `sqlite:${missing}`, "sessions"]);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`no ledger at ${missing}: there is no such file`);
    expect(existsSync(missing)).toBe(false);
  });

  it("exits 4 for an unreachable server", async () => {
    const result = await runBin(["--store", "postgres://postgres@127.0.0.1:9/test", "sessions"], {
      AGENT_LEDGER_CONNECT_TIMEOUT_MS: "5000",
    });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(
      "cannot reach the store at postgres://postgres@127.0.0.1:9/test",
    );
  });

  it("takes the store from AGENT_LEDGER_STORE", async () => {
    const result = await runBin(["sessions"], { AGENT_LEDGER_STORE: `sqlite:${file}` });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("sqlite-demo");
  });
});

// Bytes edited by hand (or a bad disk): the row is no longer an event. A tamper, not an
// unreachable store: exit 1 with the place, never 4 (a script would retry that forever).
describe("agent-ledger on a SQLite row that is no longer an event", () => {
  const path = join(directory, "unreadable.db");
  const storeUrl = `sqlite:${path}`;

  it("verify reports its run as tampered at that seq; inspect names the row", async () => {
    const store = await openStore(storeUrl);
    const recorder = new SessionRecorder({
      store,
      sessionId: "broken",
      runId: "r",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    await recorder.beforeToolCall({ toolCallId: "c1", name: "pay", args: { amount: 5 } });
    await store.close();
    const database = new Database(path);
    const edit = database.prepare("UPDATE events SET body = ? WHERE seq = 1");
    expect(edit.run(Buffer.from([0x07, 0x00])).changes).toBe(1);
    database.close();

    const verify = await runBin(["--store", storeUrl, "verify", "broken", "--json"]);
    expect(verify.code).toBe(1);
    expect(JSON.parse(verify.stdout)).toMatchObject({
      ok: false,
      runs: [{ runId: "r", ok: false, badSeq: 1 }],
    });
    const inspect = await runBin(["--store", storeUrl, "inspect", "broken"]);
    expect(inspect.code).toBe(1);
    expect(inspect.stderr).toContain("session broken, commit cursor 2 cannot be read");
  });

  // On SQLite an open run's head is its last event: one that no longer decodes failed
  // listRuns for the whole session, and verify reported that run alone.
  it("verify still reports every run of the session when one run's last event is unreadable", async () => {
    const store = await openStore(storeUrl);
    const recorder = (runId: string) =>
      new SessionRecorder({
        store,
        sessionId: "three",
        runId,
        actor: { type: "agent", id: runId },
      });
    const [ok, unreadable, edited] = [recorder("ok"), recorder("unreadable"), recorder("edited")];
    // Interleaved, so the unreadable event sits between the other runs' events.
    await ok.startRun();
    await unreadable.startRun();
    await edited.startRun();
    await ok.beforeToolCall({ toolCallId: "c1", name: "pay", args: { amount: 5 } });
    await unreadable.beforeToolCall({ toolCallId: "c2", name: "pay", args: { amount: 6 } });
    await edited.beforeToolCall({ toolCallId: "c3", name: "pay", args: { amount: 7 } });
    await ok.completeRun("paid");
    await store.close();
    const database = new Database(path);
    const where = "WHERE session_id = 'three' AND run_id = ? AND seq = 1";
    const edit = database.prepare(`UPDATE events SET body = ? ${where}`);
    // The open run's last event: bytes that no longer decode.
    expect(edit.run(Buffer.from([0x07, 0x00]), "unreadable").changes).toBe(1);
    // Another run's event still reads, but its content no longer matches its hash.
    const row = database.prepare(`SELECT body FROM events ${where}`).get("edited") as {
      body: unknown;
    };
    const json = decodeBody(row.body);
    expect(json).toContain('"amount":7');
    expect(edit.run(encodeBody(json.replace('"amount":7', '"amount":70')), "edited").changes).toBe(
      1,
    );
    database.close();

    const verifyJson = await runBin(["--store", storeUrl, "verify", "three", "--json"]);
    expect(verifyJson.code).toBe(1);
    expect(JSON.parse(verifyJson.stdout)).toEqual({
      sessionId: "three",
      ok: false,
      // SQLite's own check of the file: sound (the rows were edited, not its pages).
      file: { ok: true, problems: [] },
      runs: [
        { runId: "ok", ok: true, length: 3 },
        {
          runId: "unreadable",
          ok: false,
          length: 1,
          badSeq: 1,
          reason: expect.stringMatching(/\S/),
        },
        {
          runId: "edited",
          ok: false,
          length: 1,
          badSeq: 1,
          reason: "content does not match its hash",
        },
      ],
    });
    const text = await runBin(["--store", storeUrl, "verify", "three"]);
    expect(text.code).toBe(1);
    const lines = text.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe("ok        run ok  3 events");
    expect(lines[1]).toMatch(/^TAMPERED {2}run unreadable {2}bad seq 1: \S/);
    expect(lines[2]).toBe("TAMPERED  run edited  bad seq 1: content does not match its hash");
    expect(lines[3]).toBe("session three: 2 of 3 run(s) fail verification");
  });
});

// Deleting a run's run.started row (or moving it to another session) hid the run from
// listRuns, whose runs verify checks: verify said "intact" while inspect sent the user to it.
describe("agent-ledger on a SQLite run whose first event was deleted", () => {
  const path = join(directory, "headless.db");
  const storeUrl = `sqlite:${path}`;

  it("verify, verify --json and verify --all report the run tampered at seq 0 (exit 1)", async () => {
    const store = await openStore(storeUrl);
    const main = new SessionRecorder({
      store,
      sessionId: "headless",
      runId: "main",
      actor: { type: "agent", id: "planner" },
    });
    await main.startRun();
    const child = main.child({ runId: "sub-1", actor: { type: "agent", id: "helper" } });
    await child.startRun();
    await child.completeRun("done");
    await main.completeRun("done");
    await store.close();
    const database = new Database(path);
    const where = "WHERE session_id = 'headless' AND seq = 0 AND run_id = ?";
    expect(database.prepare(`DELETE FROM events ${where}`).run("main").changes).toBe(1);
    expect(
      database.prepare(`UPDATE events SET session_id = 'elsewhere' ${where}`).run("sub-1").changes,
    ).toBe(1);
    database.close();

    const text = await runBin(["--store", storeUrl, "verify", "headless"]);
    expect(text.code).toBe(1);
    const lines = text.stdout.trimEnd().split("\n");
    // Each run is placed by its first event left (main's is now its last, after sub-1's).
    expect(lines[0]).toMatch(/^TAMPERED {2}run sub-1 {2}bad seq 0: \S/);
    expect(lines[1]).toMatch(/^TAMPERED {2}run main {2}bad seq 0: \S/);
    expect(lines.at(-1)).toBe("session headless: 2 of 2 run(s) fail verification");

    const json = await runBin(["--store", storeUrl, "verify", "headless", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: false,
      runs: [
        { runId: "sub-1", ok: false, badSeq: 0 },
        { runId: "main", ok: false, badSeq: 0 },
      ],
    });

    const all = await runBin(["--store", storeUrl, "verify", "--all"]);
    expect(all.code).toBe(1);
    expect(all.stdout).toMatch(/TAMPERED {2}run main {2}bad seq 0/);
    expect(all.stdout).not.toContain("all intact");
  });
});
