import { existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { startViewer } from "@agent-ledger/cli";
import { inspectSession, openStore } from "@agent-ledger/core";
import { type StatusTreeRuns, scratchDirectory, statusTree } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RUN_ID, SESSION_ID, workFiles } from "./agent.js";
import {
  agentLedger,
  finalOf,
  lines,
  exampleRoot as root,
  runAndKillInside,
  startAgent as start,
} from "./agent-process.js";

/** Every directory a test here makes is inside this one, removed when the file is done. */
const scratch = scratchDirectory("langchain-agent-", { beforeAll, afterAll });

/** Killed inside `tool`: by the SIGKILL, not an exit of its own. */
async function killInside(args: string[], tool: string): Promise<void> {
  const outcome = await runAndKillInside(args, tool);
  expect(outcome.signal).toBe("SIGKILL");
}

function scenario() {
  const dir = mkdtempSync(join(scratch, "run-"));
  return { db: join(dir, "ledger.db"), dir, files: workFiles(dir) };
}

describe("langchain-agent example: SIGKILL inside a tool call, resume in a new process", () => {
  let baseline: { final: string; models: number; emails: number };

  beforeAll(async () => {
    // The child processes run the compiled example: npm test builds it (tsc -b) before vitest.
    // Building here would race the other test files reading dist/.
    if (!existsSync(join(root, "dist", "main.js"))) throw new Error("build first: npm run build");
    const { db, dir, files } = scenario();
    const outcome = await start(["run", db, dir]).done;
    expect(outcome.code).toBe(0);
    baseline = {
      final: finalOf(outcome.stdout) as string,
      models: lines(files.modelCalls),
      emails: lines(files.outbox),
    };
    expect(baseline).toEqual({
      final: "Done. send_email: email sent to bob@example.com; get_weather: sunny in Paris",
      models: 3,
      emails: 1,
    });
  });

  it("killed inside the idempotent tool: it runs again, nothing else is repeated", async () => {
    const { db, dir, files } = scenario();
    await killInside(["run", db, dir], "get_weather");
    expect(lines(files.modelCalls)).toBe(2);
    const resumed = await start(["resume", db, dir]).done;
    expect(resumed.code).toBe(0);
    expect(finalOf(resumed.stdout)).toBe(baseline.final);
    expect(lines(files.modelCalls)).toBe(baseline.models);
    expect(lines(files.outbox)).toBe(baseline.emails);
    expect(lines(files.weather)).toBe(2);
    const store = await openStore(`sqlite:${db}`);
    expect((await inspectSession(store, SESSION_ID)).unresolved).toEqual([]);
    await store.close();
  });

  it("killed inside the non-idempotent tool: resume stops on unresolved-attempt until a person abandons it", async () => {
    const { db, dir, files } = scenario();
    await killInside(["run", db, dir], "send_email");
    expect(lines(files.outbox)).toBe(1);

    const stopped = await start(["resume", db, dir]).done;
    expect(stopped.code).toBe(3);
    expect(stopped.stdout).toMatch(/^UNRESOLVED \S+/m);
    expect(lines(files.outbox)).toBe(1);

    const resolved = await start(["resolve", db, dir, "operator checked: the email went out"]).done;
    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toMatch(/^ABANDONED /m);

    const resumed = await start(["resume", db, dir]).done;
    expect(resumed.code).toBe(0);
    const final = finalOf(resumed.stdout);
    expect(final).toContain("operator checked: the email went out");
    expect(final).toContain("get_weather: sunny in Paris");
    expect(lines(files.outbox)).toBe(baseline.emails);
    expect(lines(files.modelCalls)).toBe(baseline.models);
  });

  it("killed inside the non-idempotent tool: the CLI names it, resolve --approve with its id, the resume sends it once more", async () => {
    const { db, dir, files } = scenario();
    await killInside(["run", db, dir], "send_email");
    expect(lines(files.outbox)).toBe(1);

    // What the on-call person reads: the email call, on the agent's run, is the one in flight.
    const text = await agentLedger(db, "inspect", SESSION_ID);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("tool send_email [call-email]  !! UNRESOLVED");
    const json = await agentLedger(db, "inspect", SESSION_ID, "--json");
    const { nextSteps: printed, ...inspection } = JSON.parse(json.stdout);
    expect(inspection.unresolved).toMatchObject([
      {
        kind: "tool",
        name: "send_email",
        toolCallId: "call-email",
        runId: RUN_ID,
        request: { args: { to: "bob@example.com", body: "Lunch at noon?" } },
      },
    ]);
    const { attemptId } = inspection.unresolved[0];
    expect(text.stdout).toContain(
      `agent-ledger resolve --abandon "reason" --store sqlite:${db} -- ${SESSION_ID} ${attemptId}`,
    );
    // The viewer says the same.
    const store = await openStore(`sqlite:${db}`);
    const viewer = await startViewer({ store });
    try {
      const response = await fetch(new URL(`/api/sessions/${SESSION_ID}`, viewer.url));
      const { nextSteps, ...viewed } = (await response.json()) as Record<string, unknown>;
      // The viewer's run tree is the slimmer one its page draws: what it says of the calls in
      // flight is inspect's, word for word, and so is every run's and attempt's status.
      expect(viewed).toMatchObject({
        sessionId: inspection.sessionId,
        eventCount: inspection.eventCount,
        unresolved: inspection.unresolved,
      });
      expect(statusTree(viewed.runs as StatusTreeRuns)).toEqual(statusTree(inspection.runs));
      // And what to do next, as inspect prints it.
      expect(nextSteps).toEqual([
        {
          action: "resolve",
          command: `agent-ledger resolve --abandon "reason" -- ${SESSION_ID} ${attemptId}`,
        },
      ]);
      // inspect --json gives it too, naming the store it was given.
      expect(printed).toEqual([
        {
          action: "resolve",
          command: `agent-ledger resolve --abandon "reason" --store sqlite:${db} -- ${SESSION_ID} ${attemptId}`,
        },
      ]);
    } finally {
      await viewer.close();
      await store.close();
    }

    const approved = await agentLedger(
      db,
      "resolve",
      SESSION_ID,
      attemptId,
      "--approve",
      "Bob says it never arrived",
    );
    expect(approved.code).toBe(0);
    expect(approved.stdout).toContain(
      `approved a re-run of attempt ${attemptId} (tool send_email)`,
    );

    const resumed = await start(["resume", db, dir]).done;
    expect(resumed.code).toBe(0);
    expect(finalOf(resumed.stdout)).toBe(baseline.final);
    // Approved: the email goes out exactly once more; no model call is paid twice.
    expect(lines(files.outbox)).toBe(baseline.emails + 1);
    expect(lines(files.modelCalls)).toBe(baseline.models);
    const after = JSON.parse((await agentLedger(db, "inspect", SESSION_ID, "--json")).stdout);
    expect(after.unresolved).toEqual([]);
    expect(after.runs[0].status).toBe("completed");
  });
});
