import { existsSync, mkdtempSync } from "node:fs";
import { join } from "node:path";
import { startViewer } from "@agent-ledger/cli";
import { inspectSession, openStore } from "@agent-ledger/core";
import { type StatusTreeRuns, scratchDirectory, statusTree } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentLedger,
  runAgentProcess as child,
  exampleRoot as root,
  scenario as scenarioIn,
} from "./agent-process.js";
import { FINAL_TEXT } from "./scripted-model.js";

/** Every directory a test here makes is inside this one, removed when the file is done. */
const scratch = scratchDirectory("ai-sdk-agent-", { beforeAll, afterAll });

/** A scenario of its own for one test, in a fresh directory under the scratch one. */
function scenario(name: string) {
  return scenarioIn(mkdtempSync(join(scratch, `${name}-`)));
}

async function unresolvedNames(db: string): Promise<string[]> {
  const store = await openStore(`sqlite:${db}`);
  try {
    const inspection = await inspectSession(store, "order-42");
    return inspection.unresolved.map((attempt) => attempt.name ?? attempt.kind);
  } finally {
    await store.close();
  }
}

beforeAll(() => {
  // The child processes run the compiled example: npm test builds it (tsc -b) before vitest.
  // Building here would race the other test files reading dist/.
  if (!existsSync(join(root, "dist", "main.js"))) throw new Error("build first: npm run build");
}, 120_000);

describe("ai-sdk-agent example: SIGKILL and resume", () => {
  it.each(["generate", "stream"] as const)("an uncrashed %s run", async (mode) => {
    const run = scenario(`clean-${mode}`);
    const outcome = await child(run.args(mode, "new"));
    expect(outcome.result).toEqual({ text: FINAL_TEXT, steps: 3 });
    expect(run.counts()).toEqual({
      started: 3,
      finished: 3,
      effects: ["lookupOrder 42", "sendEmail ada@example.com Order 42 shipped"],
    });
  });

  it("generateText killed inside an idempotent tool resumes to the uncrashed result", async () => {
    const clean = scenario("baseline-generate");
    const baseline = await child(clean.args("generate", "new"));
    const run = scenario("tool-crash");
    const crashed = await child(run.args("generate", "new", "tool:lookupOrder"), "IN_TOOL");
    expect(crashed.killed).toBe(true);
    expect(await unresolvedNames(run.files.db)).toEqual(["lookupOrder"]);
    const resumed = await child(run.args("generate", "resume"));
    expect(resumed.result).toEqual(baseline.result);
    expect(run.counts()).toEqual(clean.counts());
    expect(await unresolvedNames(run.files.db)).toEqual([]);
  });

  it("streamText killed mid-stream resumes: recorded calls replayed, the cut call redone once", async () => {
    const clean = scenario("baseline-stream");
    const baseline = await child(clean.args("stream", "new"));
    const run = scenario("stream-crash");
    const crashed = await child(run.args("stream", "new", "stream"), "IN_STREAM");
    expect(crashed.killed).toBe(true);
    expect(run.counts().finished).toBe(2);
    // The CLI names the cut streamed call, the third model call, as the one in flight.
    const atCrash = JSON.parse(
      (await agentLedger(run.files.db, "inspect", "order-42", "--json")).stdout,
    );
    const modelSteps = atCrash.runs[0].steps.filter(
      (step: { kind: string }) => step.kind === "model",
    );
    expect(
      modelSteps.map((step: { attempts: { status: string }[] }) => step.attempts[0]?.status),
    ).toEqual(["completed", "completed", "requested"]);
    expect(atCrash.unresolved).toMatchObject([
      { kind: "model", runId: "run-1", attemptId: modelSteps[2].attempts[0].attemptId },
    ]);
    const resumed = await child(run.args("stream", "resume"));
    expect(resumed.result).toEqual(baseline.result);
    const counts = run.counts();
    const expected = clean.counts();
    expect(counts.effects).toEqual(expected.effects);
    expect(counts.finished).toBe(expected.finished);
    // The call cut by the crash never delivered its answer: it is the only one made twice.
    expect(counts.started).toBe(expected.started + 1);
  });

  it("a run killed inside a non-idempotent tool stops with unresolved-attempt instead of repeating it", async () => {
    const run = scenario("email-crash");
    const crashed = await child(run.args("generate", "new", "tool:sendEmail"), "IN_TOOL");
    expect(crashed.killed).toBe(true);
    const resumed = await child(run.args("generate", "resume"));
    expect(resumed.error?.code).toBe("unresolved-attempt");
    const counts = run.counts();
    expect(counts.effects).toEqual(["lookupOrder 42"]);
    expect(counts.started).toBe(2);
    expect(await unresolvedNames(run.files.db)).toEqual(["sendEmail"]);
  });

  it.each([
    ["approve", ["lookupOrder 42", "sendEmail ada@example.com Order 42 shipped"]],
    ["abandon", ["lookupOrder 42"]],
  ] as const)(
    "killed inside sendEmail, the CLI names it and resolve --%s decides what the resume does",
    async (decision, effects) => {
      const clean = scenario(`baseline-${decision}`);
      const baseline = await child(clean.args("generate", "new"));
      const run = scenario(`email-${decision}`);
      const crashed = await child(run.args("generate", "new", "tool:sendEmail"), "IN_TOOL");
      expect(crashed.killed).toBe(true);

      const text = await agentLedger(run.files.db, "inspect", "order-42");
      expect(text.stdout).toContain("tool sendEmail [call-email]  !! UNRESOLVED");
      const { nextSteps: printed, ...inspection } = JSON.parse(
        (await agentLedger(run.files.db, "inspect", "order-42", "--json")).stdout,
      );
      expect(inspection.unresolved).toMatchObject([
        {
          kind: "tool",
          name: "sendEmail",
          runId: "run-1",
          request: { args: { to: "ada@example.com", subject: "Order 42 shipped" } },
        },
      ]);
      const store = await openStore(`sqlite:${run.files.db}`);
      const viewer = await startViewer({ store });
      try {
        const response = await fetch(new URL("/api/sessions/order-42", viewer.url));
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
            command: `agent-ledger resolve --abandon "reason" -- order-42 ${inspection.unresolved[0].attemptId}`,
          },
        ]);
        // inspect --json gives it too, naming the store it was given.
        expect(printed).toEqual([
          {
            action: "resolve",
            command: `agent-ledger resolve --abandon "reason" --store sqlite:${run.files.db} -- order-42 ${inspection.unresolved[0].attemptId}`,
          },
        ]);
      } finally {
        await viewer.close();
        await store.close();
      }
      const { attemptId } = inspection.unresolved[0];
      const reason = "support lead decided";
      const resolved = await agentLedger(
        run.files.db,
        "resolve",
        "order-42",
        attemptId,
        `--${decision}`,
        reason,
      );
      expect(resolved.code).toBe(0);

      const resumed = await child(run.args("generate", "resume"));
      expect(resumed.error).toBeUndefined();
      expect(resumed.result).toEqual(baseline.result);
      // Approved: the email goes out once; abandoned: never, and the model is told why.
      expect(run.counts()).toEqual({ started: 3, finished: 3, effects });
      const after = JSON.parse(
        (await agentLedger(run.files.db, "inspect", "order-42", "--json")).stdout,
      );
      expect(after.unresolved).toEqual([]);
      expect(after.runs[0].status).toBe("completed");
      if (decision === "abandon") {
        const lastModel = after.runs[0].steps
          .filter((step: { kind: string }) => step.kind === "model")
          .at(-1);
        expect(JSON.stringify(lastModel.attempts.at(-1).request)).toContain(reason);
      }
    },
  );
});
