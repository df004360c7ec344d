import {
  type EventStore,
  inspectSession,
  MemoryEventStore,
  readWholeSession,
} from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { nestedAgentToolsFixture } from "./testing/nested-agent-tools.js";
import { firstInterruption, runOptions, toolCallEvents } from "./testing/recorded-run.js";

setTracingDisabled(true);

// The first process runs in a child recording to a SQLite file, SIGKILLed inside `charge`
// after it charged (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-nested-agent-tools-", { beforeAll, afterAll });
ledgers.prepare("nested agent tools: dies inside charge");

const DONE = "outer done: mid done: inner done: charged 7";

/** Each run of the session: its actor (an agent tool's run is named after the tool), status and parent. */
async function runs(store: EventStore) {
  const events = await readWholeSession(store, "s");
  const started = events.filter((event) => event.type === "run.started");
  const agentOf = (runId: string | undefined) =>
    started.find((event) => event.runId === runId)?.actor?.id;
  const { runs: roots } = await inspectSession(store, "s");
  const statuses = new Map<string, string>();
  const visit = (run: (typeof roots)[number]) => {
    statuses.set(run.runId, run.status);
    for (const child of run.children) visit(child);
  };
  for (const run of roots) visit(run);
  return started.map((event) => ({
    agent: event.actor?.id,
    parent: agentOf(event.parentRunId),
    status: statuses.get(event.runId),
  }));
}

/** The types of the events of the tool call `callId`, wherever it was recorded. */
async function callEvents(store: EventStore, callId: string) {
  return (await toolCallEvents(store, callId)).map((event) => event.type);
}

describe("agents used as tools two levels deep (Outer -> mid -> inner -> charge)", () => {
  test("a pause at the innermost approval keeps every enclosing call and run open; approved, all go on on the same runs", async () => {
    const store = new MemoryEventStore();
    const first = nestedAgentToolsFixture({ chargeNeedsApproval: true });
    const paused = await runWithLedger(first.outer, "go", runOptions(store, first.model, "r1"));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    // Nothing enclosing the paused charge is complete: not the calls, not Mid's or Inner's run.
    expect(await callEvents(store, "co")).toEqual(["tool.requested"]);
    expect(await callEvents(store, "cm")).toEqual(["tool.requested"]);
    expect(await runs(store)).toEqual([
      { agent: "Outer", parent: undefined, status: "running" },
      { agent: "mid", parent: "Outer", status: "running" },
      { agent: "inner", parent: "mid", status: "running" },
    ]);

    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(first.outer, { ...runOptions(store, first.model, "r1"), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: DONE });
    expect(first.effects).toEqual(["charge 7"]);
    // Each agent's model was called twice: once before the pause, once to answer after it.
    expect([first.model.calls, first.midModel.calls, first.innerModel.calls]).toEqual([2, 2, 2]);
    for (const callId of ["co", "cm", "ci"])
      expect(await callEvents(store, callId)).toEqual(["tool.requested", "tool.completed"]);
    expect(await runs(store)).toEqual([
      { agent: "Outer", parent: undefined, status: "completed" },
      { agent: "mid", parent: "Outer", status: "completed" },
      { agent: "inner", parent: "mid", status: "completed" },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("resumeRun polled while the charge is undecided appends nothing: the pause is the one recorded", async () => {
    const store = new MemoryEventStore();
    const first = nestedAgentToolsFixture({ chargeNeedsApproval: true });
    await runWithLedger(first.outer, "go", runOptions(store, first.model));
    const before = await readWholeSession(store, "s");
    for (const poll of [1, 2]) {
      const next = nestedAgentToolsFixture({ chargeNeedsApproval: true });
      const paused = await resumeRun(next.outer, runOptions(store, next.model));
      expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
      const added = (await readWholeSession(store, "s")).slice(before.length);
      expect(
        added.map((event) => event.type),
        `poll ${poll}`,
      ).toEqual([]);
    }
  });

  test("paused, then decided in another process: it goes on from the checkpoint on the same runs", async () => {
    const store = new MemoryEventStore();
    const first = nestedAgentToolsFixture({ chargeNeedsApproval: true });
    await runWithLedger(first.outer, "go", runOptions(store, first.model));

    // The next process loads the pause from the checkpoint, with its own agent objects.
    const second = nestedAgentToolsFixture({ chargeNeedsApproval: true });
    second.model.calls = 1;
    second.midModel.calls = 1;
    second.innerModel.calls = 1;
    const paused = await resumeRun(second.outer, runOptions(store, second.model));
    expect(paused.interruptions.map((item) => item.name)).toEqual(["charge"]);
    const { state, item } = firstInterruption(paused);
    state.approve(item);
    const done = await resumeRun(second.outer, { ...runOptions(store, second.model), state });
    expect(done).toMatchObject({ status: "completed", finalOutput: DONE });
    expect([...first.effects, ...second.effects]).toEqual(["charge 7"]);
    // Only each agent's answer after the pause was asked of a model here.
    expect(
      [second.model, second.midModel, second.innerModel].map((model) => model.requests.length),
    ).toEqual([1, 1, 1]);
    for (const callId of ["co", "cm", "ci"])
      expect(await callEvents(store, callId)).toEqual(["tool.requested", "tool.completed"]);
    expect(await runs(store)).toEqual([
      { agent: "Outer", parent: undefined, status: "completed" },
      { agent: "mid", parent: "Outer", status: "completed" },
      { agent: "inner", parent: "mid", status: "completed" },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });

  test("a crash inside the innermost tool: only the charge is asked about, it runs only when approved, and the run completes", async () => {
    const { store, first } = await ledgers.crashed("nested agent tools: dies inside charge");
    expect(first.effects).toEqual(["charge 7"]);

    const second = nestedAgentToolsFixture();
    second.model.calls = 1;
    second.midModel.calls = 1;
    second.innerModel.calls = 1;
    const asked: string[] = [];
    let result = await resumeRun(second.outer, runOptions(store, second.model));
    while (result.status === "interrupted" && result.state) {
      for (const item of result.interruptions) {
        asked.push(item.name ?? "");
        result.state.approve(item);
      }
      result = await resumeRun(second.outer, {
        ...runOptions(store, second.model),
        state: result.state,
      });
    }
    // The agent tool calls around it run again by themselves, each on its child run.
    expect(asked).toEqual(["charge"]);
    expect(result).toMatchObject({ status: "completed", finalOutput: DONE });
    // Run again once, because a person approved it; every first model call came from the ledger.
    expect(second.effects).toEqual(["charge 7"]);
    expect(
      [second.model.requests, second.midModel.requests, second.innerModel.requests].map(
        (requests) => requests.length,
      ),
    ).toEqual([1, 1, 1]);
    expect(await runs(store)).toEqual([
      { agent: "Outer", parent: undefined, status: "completed" },
      { agent: "mid", parent: "Outer", status: "completed" },
      { agent: "inner", parent: "mid", status: "completed" },
    ]);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
  });
});
