import { type EventStore, inspectSession } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, describe, expect, test } from "vitest";
import { resumeRun } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { fixture } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// A real crash: the first process records to a SQLite file and is SIGKILLed inside `charge`
// (a plain tool, not idempotent) after it charged. A worker resumes the dead run once without a
// decision, which pauses it at the charge as an approval; the app decides it.
const ledgers = new CrashedLedgers("oa-crashed-call-interruptions-", afterAll);
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
