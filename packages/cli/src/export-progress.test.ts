import { join } from "node:path";
import { openStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { runCli } from "./run-cli.js";
import { recordDemoSession } from "./session-fixture.test.data.js";
import { textOutput as collector } from "./text-output.test.data.js";

describe("export progress", () => {
  it("reports progress on stderr only when it is a terminal", async () => {
    const url = `sqlite:${join(scratchDirectory("agent-ledger-progress-", onTestFinished), "ledger.db")}`;
    const store = await openStore(url);
    await recordDemoSession(store, "progress");
    await store.close();
    for (const isTTY of [true, false]) {
      const stdout = collector(false);
      const stderr = collector(isTTY);
      const code = await runCli(["--store", url, "export", "progress", "--format", "jsonl"], {
        stdout,
        stderr,
        env: {},
      });
      expect(code).toBe(0);
      expect(stdout.text.trim().split("\n")).toHaveLength(12);
      if (isTTY) expect(stderr.text).toContain("exported 12 events");
      else expect(stderr.text).toBe("");
    }
  });

  it("names the session with its control characters escaped, as the other commands do", async () => {
    // An id refuses C0 and C1 controls, not U+202E (which reverses what the terminal shows
    // after it) nor U+200F.
    const sessionId = "pay\u202Erun\u200F";
    const url = `sqlite:${join(scratchDirectory("agent-ledger-progress-", onTestFinished), "ledger.db")}`;
    const store = await openStore(url);
    await recordDemoSession(store, sessionId);
    await store.close();
    for (const format of ["atif", "otlp-json"]) {
      const stderr = collector(true);
      const code = await runCli(["--store", url, "export", sessionId, "--format", format], {
        stdout: collector(false),
        stderr,
        env: {},
      });
      expect(code).toBe(0);
      expect(stderr.text).toContain("projecting session pay\\u202erun\\u200f as");
      expect(stderr.text).not.toMatch(/[\u200f\u202e]/);
    }
  });
});
