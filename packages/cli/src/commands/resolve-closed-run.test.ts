import { join } from "node:path";
import { inspectSession, openStore, readWholeSession, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { describe, expect, it, onTestFinished } from "vitest";
import { runBin } from "../session-fixture.test.data.js";

// A run closed (failRun, cancelRun) with a tool call still in flight keeps the call unresolved,
// and inspect says to check its effect by hand. `resolve` on it printed the recorder's refusal,
// written for the app's code ("when this recorder resumed it... check recorder.status after
// SessionRecorder.resume"), to the person at the terminal.
describe("agent-ledger resolve on a closed run", () => {
  it("refuses either decision as run-closed, naming the run's status, and writes nothing", async () => {
    const path = join(
      scratchDirectory("agent-ledger-resolve-closed-", onTestFinished),
      "ledger.db",
    );
    const store = await openStore(`sqlite:${path}`);
    const recorder = new SessionRecorder({
      store,
      sessionId: "trip",
      runId: "booker",
      actor: { type: "agent", id: "booker" },
    });
    await recorder.startRun();
    const pay = await recorder.beforeToolCall({
      toolCallId: "call-pay",
      name: "pay",
      args: { amount: 120 },
      effect: { kind: "write", idempotent: false },
    });
    await recorder.failRun(new Error("gave up"));
    const before = await readWholeSession(store, "trip");
    await store.close();

    for (const [flag, words] of [
      ["--abandon", "cannot be abandoned"],
      ["--approve", "cannot be approved for a re-run"],
    ] as const) {
      const result = await runBin([
        "--store",
        `sqlite:${path}`,
        "resolve",
        flag,
        "checked the provider",
        "--",
        "trip",
        pay.attemptId,
      ]);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(
        `attempt ${pay.attemptId} (tool pay) on run booker ${words}: run booker is failed, and a closed run takes no more events`,
      );
      expect(result.stderr).toContain("Nothing written.");
      expect(result.stderr).not.toContain("SessionRecorder.resume");
      const json = await runBin([
        "--store",
        `sqlite:${path}`,
        "resolve",
        flag,
        "x",
        "--json",
        "--",
        "trip",
        pay.attemptId,
      ]);
      expect(json.code).toBe(1);
    }
    const reopened = await openStore(`sqlite:${path}`);
    onTestFinished(() => reopened.close());
    expect(await readWholeSession(reopened, "trip")).toEqual(before);
    const { unresolved } = await inspectSession(reopened, "trip");
    expect(unresolved.map((attempt) => attempt.attemptId)).toEqual([pay.attemptId]);
  });
});
