import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { startViewer } from "@agent-ledger/cli";
import { openStore } from "@agent-ledger/core";
import { type StatusTreeRuns, scratchDirectory, statusTree } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { agentLedger, killAt, lines, type Outcome, runToEnd } from "./agent-process.js";

/** Every directory a test here makes is inside this one, removed when the file is done. */
const scratch = scratchDirectory("oa-writer-", { beforeAll, afterAll });

describe("SIGKILL inside an agent used as a tool, decided with the CLI", () => {
  test("inspect names the inner publish on the writer's run; abandoned, it is not run again and the writer is told", async () => {
    const dir = mkdtempSync(join(scratch, "run-"));
    const db = join(dir, "ledger.db");
    // Inside the writer's publish tool, after its side effect.
    await killAt(["run", db, dir], "publish", "writer-main.js");
    expect(lines(join(dir, "published.log"))).toEqual(["Lamps are back"]);

    const { nextSteps: printed, ...inspection } = JSON.parse(
      (await agentLedger(db, "inspect", "editor", "--json")).stdout,
    );
    const writerRun = inspection.runs[0].children[0];
    expect(writerRun.status).toBe("running");
    expect(inspection.unresolved).toMatchObject([
      { name: "writer_tool", runId: "editor-run" },
      { name: "publish", runId: writerRun.runId, request: { args: { text: "Lamps are back" } } },
    ]);
    const publish = inspection.unresolved[1];
    // The hint names the call with the effect, not the agent call waiting on it.
    const text = await agentLedger(db, "inspect", "editor");
    expect(text.stdout).toContain(
      `agent-ledger resolve --abandon "reason" --store sqlite:${db} -- editor ${publish.attemptId}`,
    );
    const store = await openStore(`sqlite:${db}`);
    const viewer = await startViewer({ store });
    try {
      const response = await fetch(new URL("/api/sessions/editor", viewer.url));
      const { nextSteps, ...viewed } = (await response.json()) as Record<string, unknown>;
      // The viewer's run tree is the slimmer one its page draws: what it says of the calls in
      // flight is inspect's, word for word, and so is every run's and attempt's status.
      expect(viewed).toMatchObject({
        sessionId: inspection.sessionId,
        eventCount: inspection.eventCount,
        unresolved: inspection.unresolved,
      });
      expect(statusTree(viewed.runs as StatusTreeRuns)).toEqual(statusTree(inspection.runs));
      // And what to do next, as inspect prints it: the writer's publish, not the call waiting on it.
      expect(nextSteps).toEqual([
        { action: "decide-inner-first" },
        {
          action: "resolve",
          command: `agent-ledger resolve --abandon "reason" -- editor ${publish.attemptId}`,
        },
      ]);
      // inspect --json gives them too, naming the store it was given.
      expect(printed).toEqual([
        { action: "decide-inner-first" },
        {
          action: "resolve",
          command: `agent-ledger resolve --abandon "reason" --store sqlite:${db} -- editor ${publish.attemptId}`,
        },
      ]);
    } finally {
      await viewer.close();
      await store.close();
    }

    const reason = "it is already on the website";
    const resolved = await agentLedger(
      db,
      "resolve",
      "editor",
      publish.attemptId,
      "--abandon",
      reason,
    );
    expect(resolved.code).toBe(0);

    const { decisions, ...outcome } = await runToEnd<Outcome & { asked: string[] }>(
      ["resume", db, dir],
      "writer-main.js",
    );
    expect(decisions).toEqual([]);
    // Nothing is asked: the ledger holds the decision on publish, and the writer's call (an
    // agent used as a tool, with no effect of its own) runs again, its inner calls answered
    // from the ledger.
    expect(outcome).toEqual({
      status: "completed",
      finalOutput: `editor: writer: ${reason}`,
      asked: [],
    });
    expect(lines(join(dir, "published.log"))).toEqual(["Lamps are back"]);
    // Four model calls in all, as in a run without a crash: none paid twice.
    expect(lines(join(dir, "model-calls.log"))).toHaveLength(4);
    const after = JSON.parse((await agentLedger(db, "inspect", "editor", "--json")).stdout);
    expect(after.unresolved).toEqual([]);
    expect(after.runs[0].status).toBe("completed");
    expect(after.runs[0].children.map((run: { status: string }) => run.status)).toEqual([
      "completed",
    ]);
  });
});
