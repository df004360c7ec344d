import { inspectSession, MemoryEventStore, readWholeSession, toAtif } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import {
  guardedChargingAgent,
  runnerOutputGuardedAgent,
  toolGuardedChargingAgent,
} from "./testing/guarded-agents.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Crashes are real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-guardrails-", { beforeAll, afterAll });
// The input guardrail given to the agent (`new Agent({ inputGuardrails })`) or to the runner
// (`new Runner({ inputGuardrails })`), and the crash scenarios of each.
const GUARDED = { agent: "guarded charge", runner: "runner-guarded charge" } as const;
ledgers.prepare(
  ...(["agent", "runner"] as const).flatMap((on) => [
    `${GUARDED[on]}: dies inside charge` as const,
    `${GUARDED[on]}: dies inside the guardrail's model call` as const,
  ]),
  "tool-guarded charges: dies inside the charge of 7",
);

describe.each(["agent", "runner"] as const)(
  "an input guardrail given to the %s that runs an agent of its own (run(checker, input) in execute)",
  (on) => {
    test("its model call is answered from its child run, whichever call starts first now", async () => {
      const { store, path, first } = await ledgers.crashed(`${GUARDED[on]}: dies inside charge`);
      expect(first.effects).toEqual(["charge 7"]);
      // The policy lookup is quick in this process: the guardrail's call starts first now.
      const resumed = guardedChargingAgent({ lookupMs: 0, on });
      const { runner } = resumed;
      const result = await resumeRun(resumed.agent, {
        ...runOptions(store, resumed.model),
        runner,
      });
      // The charge in flight is asked about; no model call is made again.
      expect(result.status).toBe("interrupted");
      expect(result.interruptions.map((item) => item.name)).toEqual(["charge"]);
      expect([resumed.model.calls, resumed.guardModel.calls, resumed.effects]).toEqual([0, 0, []]);
      const [main] = (await inspectSession(store, "s")).runs;
      expect(main?.children.map((run) => run.actor?.id)).toEqual(["policy"]);
      const started = (await readWholeSession(store, "s")).filter((e) => e.type === "run.started");
      expect(started[1]?.payload).toMatchObject({ guardrailOf: "policy", guardrail: "input" });
      expect((await agentLedger(path, "verify", "s")).code).toBe(0);
    });

    test("a crash inside the guardrail's model call: the resume makes it again, the charge once", async () => {
      const { store, path, first } = await ledgers.crashed(
        `${GUARDED[on]}: dies inside the guardrail's model call`,
      );
      expect(first.effects).toEqual([]);
      // The agent's model call had completed: the ledger answers it, the next one is live.
      const resumed = guardedChargingAgent({ lookupMs: 0, charged: true, on });
      const { runner } = resumed;
      const result = await resumeRun(resumed.agent, {
        ...runOptions(store, resumed.model),
        runner,
      });
      expect(result.status).toBe("completed");
      expect(result.finalOutput).toBe("sold");
      // The guardrail's call in flight is made again; the agent's is not; one charge.
      expect(resumed.guardModel.calls).toBe(1);
      expect([resumed.model.calls, resumed.effects]).toEqual([1, ["charge 7"]]);
      const view = await inspectSession(store, "s");
      expect(view.unresolved).toEqual([]);
      const [main] = view.runs;
      expect([main?.status, main?.children.map((run) => run.status)]).toEqual([
        "completed",
        ["completed"],
      ]);
      expect((await agentLedger(path, "verify", "s")).code).toBe(0);
    });
  },
);

test("a Runner's output guardrail records its agent's model call on a child run of its own", async () => {
  const made = runnerOutputGuardedAgent();
  const store = new MemoryEventStore();
  const { runner } = made;
  const [tone] = runner.config.outputGuardrails ?? [];
  const execute = tone?.execute;
  const result = await runWithLedger(made.agent, "go", {
    ...runOptions(store, made.model),
    runner,
  });
  expect([result.status, made.guardModel.calls]).toEqual(["completed", 1]);
  // The app's runner and guardrail are left as they were.
  expect([runner.config.outputGuardrails, tone?.execute]).toEqual([[tone], execute]);
  const events = await readWholeSession(store, "s");
  const child = events.find((e) => e.type === "run.started" && e.runId !== "root");
  expect(child?.payload).toMatchObject({ guardrailOf: "tone", guardrail: "output" });
  // The checker's request is on the guardrail's run, the agent's on the run itself.
  const requests = events.filter((e) => e.type === "model.requested");
  expect(requests.map((e) => e.runId)).toEqual(["root", child?.runId]);
  const [main] = (await inspectSession(store, "s")).runs;
  expect(main?.children.map((run) => [run.actor?.id, run.status])).toEqual([["tone", "completed"]]);
  // The ATIF projection shows it as a subagent of the run, its model call a step there.
  const [guardrailRun] = (await toAtif(store, "s")).subagent_trajectories ?? [];
  expect(guardrailRun?.agent.name).toBe("tone");
  expect(guardrailRun?.steps.filter((step) => step.source === "agent")).toHaveLength(1);
});

describe("tool guardrails that run an agent of their own", () => {
  test("tool guardrails of a turn's calls: each call's is answered from its own child run", async () => {
    const { store, path, first } = await ledgers.crashed(
      "tool-guarded charges: dies inside the charge of 7",
    );
    expect(first.effects.toSorted()).toEqual(["charge 7", "charge 8"]);
    // The charge of 8's guardrail is the slow one now: the guardrails ask in the other order.
    const resumed = toolGuardedChargingAgent({ slowAmount: 8, charged: true });
    const result = await resumeRun(resumed.agent, runOptions(store, resumed.model));
    // The charge of 7 in flight is asked about; the charge of 8 and every model call answered.
    expect(result.status).toBe("interrupted");
    expect(result.interruptions.map((item) => item.name)).toEqual(["charge"]);
    expect([resumed.model.calls, resumed.guardModel.calls, resumed.effects]).toEqual([0, 0, []]);
    const started = (await readWholeSession(store, "s")).filter((e) => e.type === "run.started");
    expect(started.slice(1).map((event) => event.payload)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ guardrailOf: "amount_check", toolCallId: "call_1" }),
        expect.objectContaining({ guardrailOf: "amount_check", toolCallId: "call_2" }),
      ]),
    );
    expect((await agentLedger(path, "verify", "s")).code).toBe(0);
  });
});
