import { type EventStore, inspectSession } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { fixture } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// A real crash: the first process records to a SQLite file and is SIGKILLed inside `charge`
// (a plain tool, not idempotent) after it charged. A worker resumes the dead run once without a
// decision, which pauses it at the charge as an approval; the person on call then reads the
// ledger with the real `agent-ledger` and decides the call there, or the app decides it.
const ledgers = new CrashedLedgers("oa-crashed-call-interruptions-", { beforeAll, afterAll });
ledgers.prepare("shop: dies inside charge");

/** Crashed inside the charge, then resumed once with no decision: paused at the charge. */
async function pausedAtCrashedCharge() {
  const { store, path, first } = await ledgers.crashed("shop: dies inside charge");
  expect(first.effects).toEqual(["lookup book", "charge 7"]);
  const worker = fixture();
  const paused = await resumeRun(worker.main, runOptions(store, worker.model));
  expect(paused.status).toBe("interrupted");
  expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
  const charge = (await inspectSession(store, "s")).unresolved.find(
    (attempt) => attempt.name === "charge",
  );
  if (charge === undefined) throw new Error("the charge is not unresolved");
  return { store, path, paused, attemptId: charge.attemptId };
}

async function inspectJson(path: string) {
  const { code, stdout } = await agentLedger(path, "inspect", "s", "--json");
  expect(code).toBe(0);
  return JSON.parse(stdout) as {
    unresolved: { name: string; attemptId: string }[];
    nextSteps: { action: string; command?: string; pausedRunId?: string }[];
    paused?: { runId: string; text: string }[];
  };
}

/** The charge's attempts, as the ledger holds them after the run went on. */
async function chargeAttempts(store: EventStore) {
  const inspection = await inspectSession(store, "s");
  const step = inspection.runs[0]?.steps.find((each) => each.attempts[0]?.name === "charge");
  return step?.attempts.map((attempt) => ({
    status: attempt.status,
    outcome: attempt.outcome,
    retryOf: attempt.retryOf,
  }));
}

describe("a call in flight at the crash, handed back as an approval", () => {
  test("inspect says it was in flight at the crash and offers resolve; resolve --abandon, then resumeRun without state, tells the model the reason and does not charge again", async () => {
    const { store, path, attemptId } = await pausedAtCrashedCharge();

    const text = await agentLedger(path, "inspect", "s");
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("left in flight by a crash or by its caller stopping it");
    expect(text.stdout).not.toContain("not lost in a crash");
    expect(text.stdout).toMatch(
      new RegExp(
        `decide it in the app, or here: agent-ledger resolve --abandon "reason" .* -- s ${attemptId}`,
      ),
    );
    const json = await inspectJson(path);
    const index = json.unresolved.findIndex((attempt) => attempt.name === "charge");
    expect(json.nextSteps[index]).toMatchObject({ action: "resolve", pausedRunId: "root" });
    expect(json.paused?.[0]?.text).toContain(
      "left in flight by a crash or by its caller stopping it",
    );

    const reason = "the card was charged: the receipt is in the bank's log";
    const resolved = await agentLedger(path, "resolve", "--abandon", reason, "--", "s", attemptId);
    expect(resolved.stderr).toBe("");
    expect(resolved.code).toBe(0);
    // The pause is over: the decision is in the ledger, for the next resume to apply.
    expect((await inspectJson(path)).paused).toBeUndefined();

    const next = fixture();
    next.model.calls = 2;
    const done = await resumeRun(next.main, runOptions(store, next.model));
    expect(done.status).toBe("completed");
    expect(next.effects).toEqual([]);
    expect(JSON.stringify(next.model.requests[0]?.input)).toContain(reason);
    expect(await chargeAttempts(store)).toEqual([
      { status: "abandoned", outcome: reason, retryOf: undefined },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("resolve --approve, then resumeRun without state, charges again as a retry of the same step", async () => {
    const { store, path, attemptId } = await pausedAtCrashedCharge();
    const resolved = await agentLedger(
      path,
      "resolve",
      "--approve",
      "no charge in the bank's log",
      "--",
      "s",
      attemptId,
    );
    expect(resolved.stderr).toBe("");
    expect(resolved.code).toBe(0);

    const next = fixture();
    next.model.calls = 2;
    const done = await resumeRun(next.main, runOptions(store, next.model));
    expect(done.finalOutput).toBe("sold for 7");
    expect(next.effects).toEqual(["charge 7"]);
    expect(await chargeAttempts(store)).toEqual([
      { status: "requested", outcome: undefined, retryOf: undefined },
      { status: "completed", outcome: "charged 7", retryOf: attemptId },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("the result lists the interruptions that were in flight at the crash, with their attempt; an ordinary needsApproval call is not one", async () => {
    const { paused, attemptId } = await pausedAtCrashedCharge();
    expect(paused.inFlightAtCrash).toEqual([{ item: paused.interruptions[0], attemptId }]);

    const { store } = await ledgers.crashed("shop: dies inside charge");
    const asking = fixture({ chargeNeedsApproval: true });
    const fresh = await runWithLedger(asking.main, "go", {
      ...runOptions(store, asking.model),
      runId: "fresh",
    });
    expect(fresh.status).toBe("interrupted");
    expect(fresh.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect(fresh.inFlightAtCrash).toEqual([]);
  });

  test("rejected in the app with a message: the message is the abandoned attempt's reason, as the model is told", async () => {
    const { store, paused } = await pausedAtCrashedCharge();
    const { state, item } = firstInterruption(paused);
    const message = "not charged again: the first charge went through";
    state.reject(item, { message });
    const next = fixture();
    next.model.calls = 2;
    const done = await resumeRun(next.main, { ...runOptions(store, next.model), state });
    expect(done.status).toBe("completed");
    expect(next.effects).toEqual([]);
    expect(JSON.stringify(next.model.requests[0]?.input)).toContain(message);
    expect(await chargeAttempts(store)).toEqual([
      { status: "abandoned", outcome: message, retryOf: undefined },
    ]);
  });
});
