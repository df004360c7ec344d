import {
  type AttemptView,
  type EventStore,
  inspectSession,
  LedgerError,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { RunState, setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { approvalCallId } from "./approval-decisions.js";
import { resumeRun, runWithLedger } from "./index.js";
import { chargeCall, chargingAgent, TWO_CHARGES } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { fixture } from "./testing/fixture.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// The crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed inside `charge`, after it charged (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-run-state-position-", { beforeAll, afterAll });
ledgers.prepare("shop: dies inside charge", "shop, charge approved: dies inside charge");

/** What resumeRun throws, or undefined. */
async function refusal(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** The new process (the app) is asked about the charge in flight: its state and the attempt. */
async function pausedAtCharge(store: EventStore) {
  const app = fixture();
  const paused = await resumeRun(app.main, runOptions(store, app.model));
  const { state, item } = firstInterruption(paused);
  expect(item.name).toBe("charge");
  const attempt = (await inspectSession(store, "s")).unresolved.find(
    (unresolved) => unresolved.name === "charge",
  );
  if (!attempt) throw new Error("the charge is not unresolved");
  return { app, state, item, attempt };
}

/**
 * What `agent-ledger resolve` writes, by a person who read the ledger before the run paused
 * (resolve refuses a call of a paused run): `--abandon` or `--approve` on the attempt.
 */
async function resolvedByPerson(
  store: EventStore,
  attempt: AttemptView,
  decision: "--abandon" | "--approve",
  reason: string,
): Promise<void> {
  const person = await SessionRecorder.resume({
    store,
    sessionId: "s",
    runId: attempt.runId,
    actor: { type: "human", id: "on-call" },
  });
  if (decision === "--abandon") await person.abandon(attempt, reason);
  else await person.approve(attempt, reason);
}

describe("resumeRun({ state }) takes only the state the run is at", () => {
  test("a state the run has moved past (a retried request) is refused with conflict; nothing runs", async () => {
    const store = new MemoryEventStore();
    const { agent, model, effects } = chargingAgent(TWO_CHARGES, undefined, {
      needsApproval: true,
    });
    const paused = await runWithLedger(agent, "go", runOptions(store, model));
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const saved = state.toString();
    const next = await resumeRun(agent, {
      ...runOptions(store, model),
      state: await RunState.fromString(agent, saved),
    });
    expect(next.interruptions.map((pending) => approvalCallId(pending))).toEqual(["c1"]);
    expect(effects).toEqual(["charge 5"]);
    const before = await readWholeSession(store, "s");

    // The same request again: c0 is charged already, the run waits at c1.
    const again = await resumeRun(agent, {
      ...runOptions(store, model),
      state: await RunState.fromString(agent, saved),
    }).catch((error: unknown) => error);
    expect(LedgerError.isInstance(again, "conflict")).toBe(true);
    expect((again as LedgerError).path).toBe("$.state");
    expect((again as Error).message).toMatch(/moved on/);
    expect(effects).toEqual(["charge 5"]);
    expect(model.calls).toBe(2);
    expect(await readWholeSession(store, "s")).toEqual(before);

    // The state the run is at goes on.
    const latest = next.state;
    const pending = next.interruptions[0];
    if (!latest || !pending) throw new Error("expected the c1 interruption");
    latest.approve(pending);
    const done = await resumeRun(agent, { ...runOptions(store, model), state: latest });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
    expect(effects).toEqual(["charge 5", "charge 7"]);
  });

  test("another run's state is refused with invalid-argument; nothing runs", async () => {
    const store = new MemoryEventStore();
    const runA = chargingAgent([[chargeCall(5, "c0")]], undefined, { needsApproval: true });
    const runB = chargingAgent([[chargeCall(7, "c0")]], undefined, { needsApproval: true });
    const pausedA = await runWithLedger(runA.agent, "go", runOptions(store, runA.model, "runA"));
    await runWithLedger(runB.agent, "go", runOptions(store, runB.model, "runB"));
    const { state, item } = firstInterruption(pausedA);
    state.approve(item);
    const before = await readWholeSession(store, "s");

    const foreign = await resumeRun(runB.agent, {
      ...runOptions(store, runB.model, "runB"),
      state: await RunState.fromString(runB.agent, state.toString()),
    }).catch((error: unknown) => error);
    expect(LedgerError.isInstance(foreign, "invalid-argument")).toBe(true);
    expect((foreign as LedgerError).path).toBe("$.state");
    expect(runB.effects).toEqual([]);
    expect(runA.effects).toEqual([]);
    expect(await readWholeSession(store, "s")).toEqual(before);
  });
});

describe("resumeRun({ state }) after someone else decided the same call", () => {
  // The person read the ledger before the run paused at the charge (agent-ledger resolve refuses
  // a paused run's calls) and decided it while the app asked about it. Both directions: the
  // person abandons and the app approves, or the person approves and the app rejects. Without
  // the check, the first went on from the input and dropped the app's approval; the second went
  // on from the state and dropped the person's.
  test.each([
    { person: "--abandon", reason: "charged already by phone", app: "approve", after: "not sold" },
    { person: "--approve", reason: "not charged: checked", app: "reject", after: "sold for 7" },
  ] as const)(
    "a call decided with agent-ledger resolve $person after the state was saved: the app's $app on that state is refused with conflict, nothing recorded or run",
    async ({ person, reason, app: decision, after }) => {
      const { store } = await ledgers.crashed("shop: dies inside charge");
      const { app, state, item, attempt } = await pausedAtCharge(store);
      await resolvedByPerson(store, attempt, person, reason);
      const before = await readWholeSession(store, "s");

      if (decision === "approve") state.approve(item);
      else state.reject(item);
      const refused = await refusal(
        resumeRun(app.main, { ...runOptions(store, app.model), state }),
      );
      expect(LedgerError.isInstance(refused, "conflict")).toBe(true);
      expect((refused as LedgerError).path).toBe("$.state");
      expect((refused as Error).message).toContain("after this RunState was saved");
      expect(await readWholeSession(store, "s")).toEqual(before);
      expect(app.effects).toEqual([]);

      // Without the stale state, the run goes on with the person's decision.
      const next = fixture();
      next.model.calls = 2;
      const done = await resumeRun(next.main, runOptions(store, next.model));
      expect(done).toMatchObject({ status: "completed", finalOutput: after });
      expect(next.effects).toEqual(person === "--approve" ? ["charge 7"] : []);
    },
  );

  test("with no decision recorded since, the app's own decision on that state goes on", async () => {
    const { store } = await ledgers.crashed("shop: dies inside charge");
    const { app, state, item } = await pausedAtCharge(store);
    state.reject(item, { message: "charged already by phone" });
    app.model.calls = 2;
    const done = await resumeRun(app.main, { ...runOptions(store, app.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "not sold" });
  });
});

describe("resumeRun({ state }) refuses another run's state, however alike", () => {
  test("two runs of the same agent on the same input, with a provider that gives no unique response ids", async () => {
    const store = new MemoryEventStore();
    const runA = chargingAgent([[chargeCall(5, "c0")]], undefined, { needsApproval: true });
    const runB = chargingAgent([[chargeCall(5, "c0")]], undefined, { needsApproval: true });
    const pausedA = await runWithLedger(runA.agent, "go", runOptions(store, runA.model, "runA"));
    await runWithLedger(runB.agent, "go", runOptions(store, runB.model, "runB"));
    const { state, item } = firstInterruption(pausedA);
    state.approve(item);
    const before = await readWholeSession(store, "s");

    for (const foreign of [state, await RunState.fromString(runB.agent, state.toString())]) {
      const refused = await refusal(
        resumeRun(runB.agent, { ...runOptions(store, runB.model, "runB"), state: foreign }),
      );
      expect(LedgerError.isInstance(refused, "invalid-argument")).toBe(true);
      expect((refused as LedgerError).path).toBe("$.state");
      expect((refused as Error).message).toContain("runA");
    }
    expect(runB.effects).toEqual([]);
    expect(await readWholeSession(store, "s")).toEqual(before);

    // Its own run takes it.
    const done = await resumeRun(runA.agent, { ...runOptions(store, runA.model, "runA"), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
  });

  test("a run of another session with the same run id", async () => {
    const store = new MemoryEventStore();
    const first = chargingAgent([[chargeCall(5, "c0")]], undefined, { needsApproval: true });
    const second = chargingAgent([[chargeCall(5, "c0")]], undefined, { needsApproval: true });
    const paused = await runWithLedger(first.agent, "go", runOptions(store, first.model));
    await runWithLedger(second.agent, "go", {
      ...runOptions(store, second.model),
      sessionId: "other",
    });
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const refused = await refusal(
      resumeRun(second.agent, { ...runOptions(store, second.model), sessionId: "other", state }),
    );
    expect(LedgerError.isInstance(refused, "invalid-argument")).toBe(true);
    expect((refused as LedgerError).path).toBe("$.state");
    expect(second.effects).toEqual([]);
  });
});

describe("resumeRun({ state }) after a crash while going on from that state", () => {
  // A retried webhook: the app approved the charge and went on from the state; the process died
  // inside the charge, after it charged. The same request is sent again with the same state,
  // before and after the app polled the run (which asks about the charge in flight again).
  test("the decided state from before the crash is refused with conflict, before and after a poll; the charge runs once", async () => {
    const { store, first } = await ledgers.crashed("shop, charge approved: dies inside charge");
    expect(first.effects).toEqual(["lookup book", "charge 7"]);
    const [decided] = first.decidedStates;
    if (!decided) throw new Error("the child reported no decided state");
    const app = fixture({ chargeNeedsApproval: true });
    const retried = async () => {
      const state = await RunState.fromString(app.main, decided);
      return refusal(resumeRun(app.main, { ...runOptions(store, app.model), state }));
    };
    const expectConflict = (refused: unknown, when: string) => {
      expect(LedgerError.isInstance(refused, "conflict"), `${when}: ${refused}`).toBe(true);
      expect((refused as LedgerError).path).toBe("$.state");
    };
    const before = await readWholeSession(store, "s");
    expectConflict(await retried(), "before the poll");
    expect(await readWholeSession(store, "s")).toEqual(before);

    const polled = await resumeRun(app.main, runOptions(store, app.model));
    expect(firstInterruption(polled).item.name).toBe("charge");
    expectConflict(await retried(), "after the poll");
    expect(app.effects).toEqual([]);
  });
});
