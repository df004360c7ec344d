import { inspectSession, readWholeSession } from "@agent-ledger/core";
import { Agent, setTracingDisabled } from "@openai/agents";
import { afterAll, describe, expect, test } from "vitest";
import { resumeRun } from "./index.js";
import { chargeCall, chargingAgent } from "./testing/charging-agents.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

const DIES_AFTER_CHARGE =
  "run state input, charge approved: dies in the model call after the charge";

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-recorded-input-", afterAll);
ledgers.prepare(DIES_AFTER_CHARGE);

describe("a run that went on from a RunState (runWithLedger's input)", () => {
  test("resumed after a crash, it goes on from that state again: the approved charge is answered from the ledger, not made twice", async () => {
    const { store, first } = await ledgers.crashed(DIES_AFTER_CHARGE);
    expect(first.effects).toEqual(["charge 7"]);

    const second = chargingAgent([[chargeCall(7, "call_1")]], undefined, { needsApproval: true });
    second.model.calls = 1;
    const result = await resumeRun(second.agent, runOptions(store, second.model));

    expect(result.status).toBe("completed");
    expect(result.finalOutput).toBe("sold");
    expect(second.effects).toEqual([]);
    const view = await inspectSession(store, "s");
    expect(view.runs.map((run) => run.status)).toEqual(["completed"]);
    expect(view.unresolved).toEqual([]);
  });

  test("a state that no longer loads (the agent lost its tool) is refused, and the run is left open, not failed", async () => {
    const { store } = await ledgers.crashed(DIES_AFTER_CHARGE);
    const before = await readWholeSession(store, "s");
    const second = chargingAgent([[chargeCall(7, "call_1")]]);
    const toolless = new Agent({ name: "main" });

    await expect(resumeRun(toolless, runOptions(store, second.model))).rejects.toMatchObject({
      code: "invalid-argument",
      message: expect.stringMatching(/the RunState the run went on from does not load/),
    });
    expect(await readWholeSession(store, "s")).toEqual(before);
    expect((await inspectSession(store, "s")).runs.map((run) => run.status)).toEqual(["running"]);
  });
});
