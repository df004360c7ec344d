import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { generateText } from "ai";
import { describe, expect, it } from "vitest";
import { delegatingAgent } from "./testing/delegating-agent.test.data.js";
import {
  ABANDONED_RESEARCH,
  RESEARCH,
  researchModel,
  runResearch,
} from "./testing/research-agent.test.data.js";
import {
  crashedLedgers,
  researchRuns as runsOf,
  types,
} from "./testing/research-ledger.test.data.js";
import { assistant as actor, payload } from "./testing/scripted-model.test.data.js";
import type { UnresolvedToolCall } from "./wrap-tools.js";

// A tool call abandoned after a crash (by onUnresolved, or by a person before the resume) never
// runs again: its child run is closed, and the calls the tool had in flight there are resolved
// first, so that nothing of that tool call is left pending.

/** Runs crash scenarios one after the other on a new ledger, each in a child process. */
const crashInside = crashedLedgers("ai-sdk-abandoned-");

/** The research agent resumed, research not idempotent, with `onUnresolved` if given. */
async function resumeResearch(
  store: EventStore,
  onUnresolved?: (call: UnresolvedToolCall) => { action: "abandon"; reason: string },
) {
  const recorder = await SessionRecorder.resume({ store, actor, ...RESEARCH });
  const { model, calls } = researchModel("single");
  const effects: string[] = [];
  const text = await runResearch({
    recorder,
    variant: "single",
    model,
    effects,
    idempotent: false,
    ...(onUnresolved ? { onUnresolved } : {}),
  });
  return { text, calls, effects };
}

/** The crash left research and the model call inside it both in flight. */
async function expectBothInFlight(store: EventStore) {
  const { child } = await runsOf(store);
  expect(types(child)).toEqual(["run.started", "model.requested"]);
  const { unresolved } = await inspectSession(store, RESEARCH.sessionId);
  expect(unresolved.map(({ kind, runId }) => [kind, runId === RESEARCH.runId])).toEqual([
    ["tool", true],
    ["model", false],
  ]);
  return unresolved;
}

/** After the abandonment: the inner call abandoned, the child run cancelled, nothing pending. */
async function expectClosed(store: EventStore, reason: string) {
  const { child } = await runsOf(store);
  expect(types(child)).toEqual([
    "run.started",
    "model.requested",
    "attempt.abandoned",
    "run.cancelled",
  ]);
  expect(payload(child[2]).reason).toBe(`its tool call research (call_0) was abandoned: ${reason}`);
  expect(child[2]?.attemptId).toBe(child[1]?.attemptId);
  expect(payload(child[3]).reason).toBe(reason);
  const inspection = await inspectSession(store, RESEARCH.sessionId);
  expect(inspection.unresolved).toEqual([]);
  expect(inspection.runs[0]?.children.map((run) => run.status)).toEqual(["cancelled"]);
}

describe("a tool call abandoned after a crash inside its inner call", () => {
  it("by onUnresolved: its inner call is abandoned and its child run cancelled, with the reason", async () => {
    const store = await crashInside("research, not idempotent, inside its inner call");
    await expectBothInFlight(store);

    const reason = "the research may have been filed: checked by hand";
    const asked: string[] = [];
    const resumed = await resumeResearch(store, ({ name }) => {
      asked.push(name);
      return { action: "abandon", reason };
    });
    expect(asked).toEqual(["research"]);
    // The tool did not run again, its inner call was not made again; the model got the error.
    expect(resumed.effects).toEqual([]);
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.text).toBe("summary");
    await expectClosed(store, reason);
    const { root } = await runsOf(store);
    expect(types(root).slice(3, 5)).toEqual(["tool.requested", "attempt.abandoned"]);

    // Resumed once more, everything is answered from the ledger and nothing else is written.
    const length = (await readWholeSession(store, RESEARCH.sessionId)).length;
    const again = await resumeResearch(store);
    expect(again.calls).toEqual([]);
    expect(again.text).toBe("summary");
    expect(await readWholeSession(store, RESEARCH.sessionId)).toHaveLength(length);
  });

  it("by a person before the resume: the resume replaying the abandonment closes the child run", async () => {
    const store = await crashInside("research, not idempotent, inside its inner call");
    const [research] = await expectBothInFlight(store);
    if (research === undefined) throw new Error("research is unresolved");

    const reason = "abandoned by the operator";
    const person = await SessionRecorder.resume({ store, actor, ...RESEARCH });
    await person.abandon(research, reason);

    // No onUnresolved: the tool call is answered with its abandonment from the ledger.
    const resumed = await resumeResearch(store);
    expect(resumed.effects).toEqual([]);
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.text).toBe("summary");
    await expectClosed(store, reason);
  });
});

describe("a crash while a tool call is being abandoned", () => {
  it("killed after the abandonment, or after its inner call's: the next resume finishes the close", async () => {
    for (const killed of [
      "research resumed and abandoned, once its abandonment is committed",
      "research resumed and abandoned, once its inner call's is committed",
    ] as const) {
      const store = await crashInside("research, not idempotent, inside its inner call", killed);
      const { child } = await runsOf(store);
      const abandonedInside = killed.includes("inner call's") ? ["attempt.abandoned"] : [];
      expect(types(child)).toEqual(["run.started", "model.requested", ...abandonedInside]);

      // No onUnresolved: the abandonment is in the ledger, the resume replays it.
      const resumed = await resumeResearch(store);
      expect(resumed.calls).toEqual(["final"]);
      expect(resumed.text).toBe("summary");
      await expectClosed(store, ABANDONED_RESEARCH);
    }
  });
});

/**
 * The delegating agent whose lookup asks the model inside. `live`: the process stops inside
 * that call (it never answers); otherwise delegate is abandoned by `onUnresolved`.
 */
function delegating(recorder: SessionRecorder, live: boolean) {
  return delegatingAgent({
    recorder,
    lookup: async (model) => (await generateText({ model, prompt: "inside lookup" })).text,
    ...(live ? { inside: () => new Promise<never>(() => {}) } : {}),
    onUnresolved: () => ({ action: "abandon", reason: "not redone" }),
  }).run();
}

describe("an abandoned tool call whose sub-agent's tool was in flight inside", () => {
  it("abandons that tool call too and closes its child run, then its own", async () => {
    const store = new MemoryEventStore();
    const address = { sessionId: "s1", runId: "r1" };
    // The first process stops inside lookup's model call: its promises never settle.
    void delegating(new SessionRecorder({ store, actor, ...address }), true);
    await expect
      .poll(async () => (await inspectSession(store, "s1")).unresolved.map(({ kind }) => kind))
      .toEqual(["tool", "tool", "model"]);

    const resumed = await SessionRecorder.resume({ store, actor, ...address });
    expect((await delegating(resumed, false)).text).toBe("done");

    const inspection = await inspectSession(store, "s1");
    expect(inspection.unresolved).toEqual([]);
    const delegate = inspection.runs[0]?.children[0];
    const lookup = delegate?.children[0];
    expect([delegate?.status, delegate?.result]).toEqual(["cancelled", { reason: "not redone" }]);
    const inDelegate = "its tool call delegate (d1) was abandoned: not redone";
    // Each child run is cancelled with the reason its tool call was abandoned with.
    expect([lookup?.status, lookup?.result]).toEqual(["cancelled", { reason: inDelegate }]);
    expect(lookup?.steps[0]?.attempts[0]?.outcome).toBe(
      `its tool call lookup (l1) was abandoned: ${inDelegate}`,
    );
    const outcomes = (run: typeof delegate) =>
      run?.steps.flatMap((step) => step.attempts.map(({ kind, status }) => [kind, status]));
    expect(outcomes(delegate)).toEqual([
      ["model", "completed"],
      ["tool", "abandoned"],
    ]);
    expect(outcomes(lookup)).toEqual([["model", "abandoned"]]);
  });
});
