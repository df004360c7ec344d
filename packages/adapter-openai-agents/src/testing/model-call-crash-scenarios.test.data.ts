import { resumeRun, runWithLedger } from "../index.js";
import { isType, nth, type Scenario } from "./crash-points.test.data.js";
import { rateLimitedAgent, retryingAgent } from "./fixture.js";
import { guardedChargingAgent, toolGuardedChargingAgent } from "./guarded-agents.js";
import { appRecorder, runOptions, streamedRun } from "./recorded-run.js";

// The guarded charging agent's run, its input guardrail given to the agent or to the runner
// (`on`), dying inside the charge. The guardrail's lookup is slow here: the agent's model call
// starts before the guardrail's.
const guardedDyingInsideCharge =
  (on: "agent" | "runner"): Scenario =>
  async (child) => {
    const first = guardedChargingAgent({
      lookupMs: 50,
      afterEffect: child.afterEffect("charge 7"),
      on,
    });
    const { runner } = first;
    await runWithLedger(first.agent, "go", { ...runOptions(child.store, first.model), runner });
  };

// The same, dying inside the guardrail's model call (the agent's has completed by then).
const guardedDyingInGuardrailCall =
  (on: "agent" | "runner"): Scenario =>
  async (child) => {
    const first = guardedChargingAgent({ lookupMs: 0, afterEffect: child.afterEffect(), on });
    child.watch(first.guardModel, { dieInCall: 0 });
    const { runner } = first;
    await runWithLedger(first.agent, "go", { ...runOptions(child.store, first.model), runner });
  };

// The rate-limited agent's run, dying right after its `count`th model call failure committed
// (before the runner retries it, or the run is closed as failed). `resume`: a second process,
// resuming the run a killed one left; it counts only the failures it commits (the recorded ones
// are answered from the ledger).
const rateLimitedDyingAfter =
  (
    count: number,
    options: Parameters<typeof rateLimitedAgent>[0],
    how: "run" | "resume" = "run",
  ): Scenario =>
  async (child) => {
    const first = rateLimitedAgent(options);
    const store = child.dyingAfter(nth(count, isType("model.failed")));
    if (how === "resume") await resumeRun(first.agent, runOptions(store, first.model));
    else await runWithLedger(first.agent, "go", runOptions(store, first.model));
  };

// The same run streamed, on a recorder the app made (`ledgerModelProvider` with `{ recorder }`).
const rateLimitedStreamedDyingAfter =
  (count: number, options: Parameters<typeof rateLimitedAgent>[0]): Scenario =>
  async (child) => {
    const first = rateLimitedAgent(options);
    const store = child.dyingAfter(nth(count, isType("model.failed")));
    await streamedRun(first, await appRecorder(store, "start"));
  };

export const MODEL_CALL_CRASH_SCENARIOS = {
  "guarded charge: dies inside charge": guardedDyingInsideCharge("agent"),
  "runner-guarded charge: dies inside charge": guardedDyingInsideCharge("runner"),
  // The guardrail of the charge of 7 is slow here: the charge of 8 is checked first.
  "tool-guarded charges: dies inside the charge of 7": async (child) => {
    const first = toolGuardedChargingAgent({
      slowAmount: 7,
      afterEffect: child.afterEffect("charge 7"),
    });
    await runWithLedger(first.agent, "go", runOptions(child.store, first.model));
  },
  "guarded charge: dies inside the guardrail's model call": guardedDyingInGuardrailCall("agent"),
  "runner-guarded charge: dies inside the guardrail's model call":
    guardedDyingInGuardrailCall("runner"),
  // The provider fails the first call with a 500, the runner retries it; dies after the lookup.
  "retrying: dies after its tool completed": async (child) => {
    const first = retryingAgent();
    child.watch(first.model);
    const store = child.dyingAfter(isType("tool.completed"));
    await runWithLedger(first.agent, "price?", runOptions(store, first.model));
  },
  "rate limited: dies after the failure was recorded": rateLimitedDyingAfter(1, { failures: 1 }),
  "rate limited, a retry left: dies after the failure was recorded": rateLimitedDyingAfter(1, {
    failures: 1,
    retries: 1,
  }),
  "rate limited, no retry left: dies after the last failure was recorded": rateLimitedDyingAfter(
    2,
    { failures: 2, retries: 1 },
  ),
  // Every attempt the runner may make fails (3 retries), and the process dies waiting to retry
  // the second failure; then a resume dies waiting to retry the failure of its retry.
  "rate limited, retries left: dies after the second failure was recorded": rateLimitedDyingAfter(
    2,
    { failures: 4, retries: 3 },
  ),
  "rate limited, retries left, resumed: dies after its retry's failure was recorded":
    rateLimitedDyingAfter(1, { failures: 4, retries: 3 }, "resume"),
  // Streamed, on a recorder the app made: how an app streams a run it resumes (resumeRun does not).
  "rate limited, a retry left, streamed: dies after the failure was recorded":
    rateLimitedStreamedDyingAfter(1, { failures: 1, retries: 1 }),
  "rate limited, retries left, streamed: dies after the second failure was recorded":
    rateLimitedStreamedDyingAfter(2, { failures: 4, retries: 3 }),
} satisfies Record<string, Scenario>;
