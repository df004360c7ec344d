import { LedgerError, MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { RunState, setTracingDisabled } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { approvalCallId } from "./approval-decisions.js";
import { resumeRun, runWithLedger } from "./index.js";
import { chargeCall, chargingAgent, TWO_CHARGES } from "./testing/charging-agents.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

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
