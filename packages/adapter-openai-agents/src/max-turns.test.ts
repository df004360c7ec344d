import { MemoryEventStore } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { chargingAgent, TWO_CHARGES } from "./testing/charging-agents.js";
import { firstInterruption, runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Two charges, then "sold": three turns, one more than maxTurns allows.
const options = (store: MemoryEventStore, made: ReturnType<typeof chargingAgent>) => ({
  ...runOptions(store, made.model),
  maxTurns: 2,
});

describe("maxTurns across a resume (the README's resumeRun)", () => {
  test("without a crash the run fails; paused at the call in flight, it gets maxTurns anew", async () => {
    const whole = chargingAgent(TWO_CHARGES);
    const failure = await runWithLedger(whole.agent, "go", options(new MemoryEventStore(), whole))
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect((failure as Error).name).toBe("MaxTurnsExceededError");

    const store = new MemoryEventStore();
    // The first process stops inside the first charge and never comes back (as if it died).
    const stuck = chargingAgent(TWO_CHARGES, () => new Promise<void>(() => {}));
    void runWithLedger(stuck.agent, "go", options(store, stuck));
    await expect.poll(() => stuck.effects).toEqual(["charge 5"]);

    // The ledger answers the first model call; the resumed model goes on from the second.
    const resumed = chargingAgent(TWO_CHARGES.slice(1));
    const paused = await resumeRun(resumed.agent, options(store, resumed));
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(resumed.agent, { ...options(store, resumed), state });
    // Three turns in all under maxTurns: 2: the SDK counted from the paused RunState.
    expect([done.status, done.finalOutput, resumed.effects]).toEqual([
      "completed",
      "sold",
      ["charge 5", "charge 7"],
    ]);
  });
});
