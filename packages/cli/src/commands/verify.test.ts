import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import Database from "better-sqlite3";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCliInterrupted } from "../interrupt-fixture.test.data.js";
import { runBin } from "../session-fixture.test.data.js";

/**
 * A session of two runs, each with a tool result kept in the blob store; then one blob's row
 * gets a byte flipped and the other's is deleted, behind the ledger's back.
 */
async function sessionWithBadBlobs(): Promise<{ storeUrl: string; flipped: string; lost: string }> {
  const path = join(scratchDirectory("agent-ledger-verify-", onTestFinished), "ledger.db");
  const storeUrl = `sqlite:${path}`;
  const store = await openStore(storeUrl);
  const refs: string[] = [];
  for (const runId of ["flipped", "lost", "intact"]) {
    const recorder = new SessionRecorder({
      store,
      sessionId: "blobs",
      runId,
      actor: { type: "agent", id: runId },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "read", args: {} });
    const text = `The ${runId} report. `.repeat(400);
    await recorder.toolCompleted(call, { text });
    await recorder.completeRun("done");
    refs.push(await store.putBlob(text));
  }
  await store.close();
  const [flipped, lost] = refs as [string, string];
  const database = new Database(path);
  const digest = (ref: string) => Buffer.from(ref.slice("sha256:".length), "hex");
  const row = database
    .prepare("SELECT content FROM blobs WHERE digest = ?")
    .get(digest(flipped)) as {
    content: Buffer;
  };
  const content = Buffer.from(row.content);
  content[content.length - 1] = (content[content.length - 1] as number) ^ 1;
  database.prepare("UPDATE blobs SET content = ? WHERE digest = ?").run(content, digest(flipped));
  expect(database.prepare("DELETE FROM blobs WHERE digest = ?").run(digest(lost)).changes).toBe(1);
  database.close();
  return { storeUrl, flipped, lost };
}

describe("agent-ledger verify on a session whose blobs were edited", () => {
  it("fails the runs naming a corrupt or missing blob, with its ref and seq (text and --json)", async () => {
    const { storeUrl, flipped, lost } = await sessionWithBadBlobs();
    const text = await runBin(["--store", storeUrl, "verify", "blobs"]);
    expect(text.code).toBe(1);
    expect(text.stdout.trimEnd().split("\n")).toEqual([
      `TAMPERED  run flipped  bad seq 2: blob ${flipped} named at seq 2 does not hash to its reference`,
      `TAMPERED  run lost  bad seq 2: blob ${lost} named at seq 2 is not in the store`,
      "ok        run intact  4 events",
      "session blobs: 2 of 3 run(s) fail verification",
    ]);
    const json = await runBin(["--store", storeUrl, "verify", "blobs", "--json"]);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual({
      sessionId: "blobs",
      ok: false,
      // SQLite's own check of the file: sound (the rows were edited, not its pages).
      file: { ok: true, problems: [] },
      runs: [
        {
          runId: "flipped",
          ok: false,
          length: 4,
          badSeq: 2,
          blob: { ref: flipped, problem: "corrupt" },
          reason: `blob ${flipped} named at seq 2 does not hash to its reference`,
        },
        {
          runId: "lost",
          ok: false,
          length: 4,
          badSeq: 2,
          blob: { ref: lost, problem: "missing" },
          reason: `blob ${lost} named at seq 2 is not in the store`,
        },
        { runId: "intact", ok: true, length: 4 },
      ],
    });
  });
});

describe("agent-ledger verify stopped part way (Ctrl-C)", () => {
  it("says which of the runs it checked fail, and prints no verdict on the session", async () => {
    const { storeUrl, flipped } = await sessionWithBadBlobs();
    // Ctrl-C once the first run's line is out: the second run is not begun.
    expect(
      await runCliInterrupted(["--store", storeUrl, "verify", "blobs"], "TAMPERED  run flipped"),
    ).toEqual({
      code: 130,
      stdout: `TAMPERED  run flipped  bad seq 2: blob ${flipped} named at seq 2 does not hash to its reference\n`,
      stderr:
        "agent-ledger: verify interrupted after checking 1 of 3 run(s) of session blobs: 1 of them fail verification (above); the other runs were not checked\n",
    });
    // --json prints its document only whole: stopped, nothing.
    expect(await runCliInterrupted(["--store", storeUrl, "verify", "blobs", "--json"])).toEqual({
      code: 130,
      stdout: "",
      stderr:
        "agent-ledger: verify interrupted after checking 0 of 3 run(s) of session blobs: the session's result is not known\n",
    });
  });
});
