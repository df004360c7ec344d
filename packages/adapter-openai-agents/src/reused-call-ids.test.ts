import { type EventStore, inspectSession } from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { approvalCallId } from "./approval-decisions.js";
import { resumeRun } from "./index.js";
import { agentLedger } from "./testing/agent-ledger-cli.js";
import {
  CALL_0_EVERY_TURN,
  chargingAgent,
  TWO_CALLS_EVERY_TURN,
} from "./testing/charging-agents.js";
import type { CrashScenario } from "./testing/crash-scenarios.test.data.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { runOptions } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Some providers number tool calls per response (call_0 on every turn). Each crash is real: the
// first process runs in a child recording to a SQLite file and is SIGKILLed inside a charge,
// after it charged (testing/crash-scenarios.test.data.ts); the test is the process after it.
const ledgers = new CrashedLedgers("oa-reused-call-ids-", { beforeAll, afterAll });
ledgers.prepare(
  "call_0 every turn: dies inside the first charge",
  "call_0 every turn: dies inside the second charge",
  "call_0 every turn: dies inside the third charge",
  "two calls every turn: dies inside the second turn's charges",
);

/** A call as the tests name it: `<callId> charge <amount>`. */
const named = (callId: string | undefined, args: unknown) =>
  `${callId} charge ${(args as { amount: number }).amount}`;

/** Each tool call of the run, in order: its name, then what each of its attempts came to. */
async function toolCalls(store: EventStore): Promise<string[]> {
  const steps = (await inspectSession(store, "s")).runs[0]?.steps ?? [];
  return steps
    .filter((step) => step.kind === "tool")
    .map((step) => {
      const [first] = step.attempts;
      const request = first?.request as { args: unknown };
      const ends = step.attempts.map((attempt) =>
        attempt.status === "completed" ? attempt.outcome : attempt.status,
      );
      return `${named(first?.toolCallId, request.args)}: ${ends.join(", ")}`;
    });
}

async function inFlight(store: EventStore): Promise<string[]> {
  const { unresolved } = await inspectSession(store, "s");
  return unresolved.map((attempt) =>
    named(attempt.toolCallId, (attempt.request as { args: unknown }).args),
  );
}

const DECIDERS = ["the app, on the paused run's state", "agent-ledger resolve"] as const;

/**
 * The process after the crash: a person decides each call the crash left in flight (`rejected`
 * names those rejected, the others are approved), in the app (the run resumed, paused at them,
 * decided on its state) or with the built `agent-ledger resolve --approve` / `--abandon` before
 * the run is resumed; the run then goes on to its end.
 */
async function decidedAndResumed(
  crash: { store: EventStore; path: string },
  next: ReturnType<typeof chargingAgent>,
  decider: (typeof DECIDERS)[number],
  rejected: readonly string[] = [],
) {
  const { store, path } = crash;
  if (decider === "agent-ledger resolve") {
    for (const attempt of (await inspectSession(store, "s")).unresolved) {
      const call = named(attempt.toolCallId, (attempt.request as { args: unknown }).args);
      const decision = rejected.includes(call)
        ? ["--abandon", "charged already: seen at the bank"]
        : ["--approve", "not charged: checked with the bank"];
      const resolved = await agentLedger(path, "resolve", "s", attempt.attemptId, ...decision);
      expect(resolved.code, resolved.stderr).toBe(0);
    }
    return resumeRun(next.agent, runOptions(store, next.model));
  }
  const calls = next.model.calls;
  const paused = await resumeRun(next.agent, runOptions(store, next.model));
  expect(paused.status).toBe("interrupted");
  // The calls asked about are those in flight, nothing was run or asked of the model before.
  const asked = paused.interruptions.map((item) =>
    named(approvalCallId(item), JSON.parse(String(item.arguments))),
  );
  expect(asked).toEqual(await inFlight(store));
  expect(next.model.calls).toBe(calls);
  expect(next.effects).toEqual([]);
  const state = paused.state;
  if (!state) throw new Error("expected a paused state");
  paused.interruptions.forEach((item, index) => {
    if (rejected.includes(asked[index] ?? "")) state.reject(item);
    else state.approve(item);
  });
  return resumeRun(next.agent, { ...runOptions(store, next.model), state });
}

const CASES: {
  where: string;
  scenario: CrashScenario;
  turns: typeof CALL_0_EVERY_TURN;
  /** The model calls the ledger holds: the script goes on after them. */
  recordedTurns: number;
  inFlight: string[];
  /** The charges the process after the crash makes (sorted). */
  charges: string[];
  toolCalls: string[];
}[] = [
  {
    where: "in the last turn, its id answered on an earlier one",
    scenario: "call_0 every turn: dies inside the third charge",
    turns: CALL_0_EVERY_TURN,
    recordedTurns: 3,
    inFlight: ["call_0 charge 2"],
    charges: ["charge 2"],
    toolCalls: [
      "call_0 charge 7: charged 7",
      "call_0 charge 3: charged 3",
      "call_0 charge 2: requested, charged 2",
    ],
  },
  {
    where: "between turns that reuse its id",
    scenario: "call_0 every turn: dies inside the second charge",
    turns: CALL_0_EVERY_TURN,
    recordedTurns: 2,
    inFlight: ["call_0 charge 3"],
    charges: ["charge 2", "charge 3"],
    toolCalls: [
      "call_0 charge 7: charged 7",
      "call_0 charge 3: requested, charged 3",
      "call_0 charge 2: charged 2",
    ],
  },
  {
    where: "in the first turn, its id reused by the later ones",
    scenario: "call_0 every turn: dies inside the first charge",
    turns: CALL_0_EVERY_TURN,
    recordedTurns: 1,
    inFlight: ["call_0 charge 7"],
    charges: ["charge 2", "charge 3", "charge 7"],
    toolCalls: [
      "call_0 charge 7: requested, charged 7",
      "call_0 charge 3: charged 3",
      "call_0 charge 2: charged 2",
    ],
  },
  {
    where: "two parallel calls in flight, both ids answered on an earlier turn",
    scenario: "two calls every turn: dies inside the second turn's charges",
    turns: TWO_CALLS_EVERY_TURN,
    recordedTurns: 2,
    inFlight: ["call_0 charge 3", "call_1 charge 4"],
    charges: ["charge 3", "charge 4"],
    toolCalls: [
      "call_0 charge 7: charged 7",
      "call_1 charge 5: charged 5",
      "call_0 charge 3: requested, charged 3",
      "call_1 charge 4: requested, charged 4",
    ],
  },
];

describe("resumeRun with a provider that reuses tool call ids, after a person approved a call in flight", () => {
  test.each(CASES.flatMap((testCase) => DECIDERS.map((decider) => ({ ...testCase, decider }))))(
    "a call $where, approved in $decider: it runs once, under its retry; a later call of the same id is a call of its own; nothing is left in flight",
    async (testCase) => {
      const crash = await ledgers.crashed(testCase.scenario);
      expect(await inFlight(crash.store)).toEqual(testCase.inFlight);

      const next = chargingAgent(testCase.turns);
      next.model.calls = testCase.recordedTurns;
      const done = await decidedAndResumed(crash, next, testCase.decider);
      expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
      // The completed calls are answered from the ledger; only the approved ones run again.
      expect([...next.effects].sort()).toEqual(testCase.charges);
      expect(await toolCalls(crash.store)).toEqual(testCase.toolCalls);
      expect(await inFlight(crash.store)).toEqual([]);
    },
  );

  test.each(DECIDERS)(
    "two parallel calls in flight, one approved and one rejected, in %s: the approved one runs once, the rejected one is abandoned and not run",
    async (decider) => {
      const crash = await ledgers.crashed(
        "two calls every turn: dies inside the second turn's charges",
      );
      const next = chargingAgent(TWO_CALLS_EVERY_TURN);
      next.model.calls = 2;
      const done = await decidedAndResumed(crash, next, decider, ["call_1 charge 4"]);
      expect(done).toMatchObject({ status: "completed", finalOutput: "sold" });
      expect(next.effects).toEqual(["charge 3"]);
      expect(await toolCalls(crash.store)).toEqual([
        "call_0 charge 7: charged 7",
        "call_1 charge 5: charged 5",
        "call_0 charge 3: requested, charged 3",
        "call_1 charge 4: abandoned",
      ]);
      expect(await inFlight(crash.store)).toEqual([]);
    },
  );
});
