import { join } from "node:path";
import {
  type EventStore,
  inspectSession,
  type LedgerEvent,
  MemoryEventStore,
  readWholeSession,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import type { CrashScenarioName } from "./testing/crash-scenarios.test.data.js";
import { NESTED, nestedModel, runNested } from "./testing/nested-agent.test.data.js";
import { assistant as actor, payload } from "./testing/scripted-model.test.data.js";

const scratch = scratchDirectory("ai-sdk-nested-", { beforeAll, afterAll });
let crashes = 0;

async function crashInside(scenario: CrashScenarioName) {
  const path = join(scratch, `crash-${++crashes}.db`);
  const crashed = await crashInChild(scenario, path);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { store, crashed };
}

async function resumeNested(store: EventStore) {
  const recorder = await SessionRecorder.resume({ store, actor, ...NESTED });
  const { model, calls } = nestedModel();
  const effects: string[] = [];
  const text = await runNested({ recorder, model, effects });
  return { text, calls, effects };
}

/**
 * Each tool call of the session: its name, the run it is on (the agent's, or the child run of
 * the delegate call it was made in, by position), and what caused it (run and event type).
 */
async function toolCallsOf(store: EventStore) {
  const events = await readWholeSession(store, NESTED.sessionId);
  const byId = new Map(events.map((event) => [event.eventId, event]));
  const delegates = events.filter(
    (event) => event.type === "tool.requested" && payload(event).name === "delegate",
  );
  // The child run of each delegate call (a retry's child is its first attempt's).
  const firstOf = (request: LedgerEvent): LedgerEvent =>
    request.retryOf === undefined
      ? request
      : firstOf(delegates.find((event) => event.attemptId === request.retryOf) as LedgerEvent);
  const childRuns = events
    .filter((event) => event.type === "run.started" && event.causedByEventId !== undefined)
    .map((started) => started.runId);
  const runName = (runId: string) =>
    runId === NESTED.runId ? "agent" : `delegate ${childRuns.indexOf(runId) + 1}`;
  const calls = events
    .filter((event) => event.type === "tool.requested")
    .map((event) => {
      const cause = byId.get(event.causedByEventId ?? "");
      return {
        name: payload(event).name as string,
        on: runName(event.runId),
        causedBy: cause ? `${runName(cause.runId)} ${cause.type}` : "none",
        retry: event.retryOf !== undefined,
      };
    });
  return { events, calls, firstOf };
}

describe("a wrapped tool called inside another wrapped tool", () => {
  it("is recorded on that tool's child run, caused by the child's completion that asked for it", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...NESTED, actor });
    const { model } = nestedModel();
    expect(await runNested({ recorder, model })).toBe("all done");

    const { events, calls } = await toolCallsOf(store);
    expect(calls).toEqual([
      { name: "delegate", on: "agent", causedBy: "agent model.completed", retry: false },
      { name: "lookup", on: "delegate 1", causedBy: "delegate 1 model.completed", retry: false },
      { name: "delegate", on: "agent", causedBy: "agent model.completed", retry: false },
      { name: "lookup", on: "delegate 2", causedBy: "delegate 2 model.completed", retry: false },
    ]);
    const lookups = events.filter(
      (event) => event.type === "tool.completed" && event.runId !== NESTED.runId,
    );
    expect(lookups.map((event) => payload(event).result)).toEqual(["found 1", "found 2"]);
  });

  it("resumes a run that died in the agent's final call: everything answered from the ledger", async () => {
    const { store, crashed } = await crashInside("nested agent at the final call");
    expect(crashed.effects).toEqual(["lookup", "lookup"]);

    const resumed = await resumeNested(store);
    expect(resumed.text).toBe("all done");
    expect(resumed.calls).toEqual(["final"]);
    expect(resumed.effects).toEqual([]);
    const again = await resumeNested(store);
    expect(again.text).toBe("all done");
    expect(again.calls).toEqual([]);
    expect((await inspectSession(store, NESTED.sessionId)).unresolved).toEqual([]);
  });

  it("resumes a run that died inside the inner tool: the inner tool runs again on its child run", async () => {
    const { store, crashed } = await crashInside("nested agent inside the second lookup");
    expect(crashed.effects).toEqual(["lookup"]);

    const resumed = await resumeNested(store);
    expect(resumed.text).toBe("all done");
    // The second delegation's first sub-agent call is in the ledger; the lookup runs again.
    expect(resumed.calls).toEqual(["sub 1", "final"]);
    expect(resumed.effects).toEqual(["lookup"]);

    const { calls } = await toolCallsOf(store);
    expect(calls).toEqual([
      { name: "delegate", on: "agent", causedBy: "agent model.completed", retry: false },
      { name: "lookup", on: "delegate 1", causedBy: "delegate 1 model.completed", retry: false },
      { name: "delegate", on: "agent", causedBy: "agent model.completed", retry: false },
      { name: "lookup", on: "delegate 2", causedBy: "delegate 2 model.completed", retry: false },
      { name: "delegate", on: "agent", causedBy: "agent model.completed", retry: true },
      { name: "lookup", on: "delegate 2", causedBy: "delegate 2 model.completed", retry: true },
    ]);
    expect((await inspectSession(store, NESTED.sessionId)).unresolved).toEqual([]);
    const again = await resumeNested(store);
    expect(again.text).toBe("all done");
    expect(again.calls).toEqual([]);
  });
});
