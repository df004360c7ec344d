import { join } from "node:path";
import { openStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { runBin } from "../session-fixture.test.data.js";

describe("agent-ledger resolve", () => {
  it("names a model call whose model the ledger does not know as 'model', with no stray space", async () => {
    const path = join(scratchDirectory("agent-ledger-resolve-", onTestFinished), "ledger.db");
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "cut",
      runId: "run",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeModelCall({ request: { input: "hi" } });
    await store.close();

    const result = await runBin([
      "--store",
      `sqlite:${path}`,
      "resolve",
      "cut",
      call.attemptId,
      "--abandon",
      "provider outage",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `abandoned attempt ${call.attemptId} (model) on run run at seq 2: provider outage\n`,
    );
  });

  it("shows a tool name holding terminal escapes as escapes", async () => {
    // A model names the tool it calls: an OSC sequence in it set the terminal's title.
    const path = join(scratchDirectory("agent-ledger-resolve-", onTestFinished), "ledger.db");
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "named",
      runId: "run",
      actor: { type: "agent", id: "a" },
    });
    await recorder.startRun();
    const call = await recorder.beforeToolCall({ name: "pay\u001b]0;owned\u0007", args: {} });
    await store.close();

    const args = ["--store", `sqlite:${path}`, "resolve", "named", call.attemptId];
    const result = await runBin([...args, "--abandon", "checked"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `abandoned attempt ${call.attemptId} (tool pay\\u001b]0;owned\\u0007) on run run at seq 2: checked\n`,
    );
  });
});
