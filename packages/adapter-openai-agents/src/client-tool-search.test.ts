import {
  type AppendRequest,
  type EventStore,
  inspectSession,
  type LedgerEvent,
  MemoryEventStore,
  readWholeSession,
  toAtif,
} from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import {
  attachClientToolSearchExecutor,
  type HostedTool,
  setTracingDisabled,
} from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { registryAgent } from "./testing/client-tool-search-agent.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import { FailingStore } from "./testing/failing-store.js";
import { firstInterruption, runOptions, toolCallEvents } from "./testing/recorded-run.js";

setTracingDisabled(true);

// A tool search the SDK runs in the process with the app's `execute` (which may query a registry
// over the network) is a call of the process: recorded as a tool call of its run, its request
// committed before the callback runs.

const typesOf = (events: LedgerEvent[]) => events.map((event) => event.type);

// An append of the event `type` whose payload names `name` (a tool call's), or any of that type.
const appends =
  (type: string, name?: string) =>
  (request: AppendRequest): boolean =>
    request.events.some(
      (event) =>
        event.type === type &&
        (name === undefined || (event.payload as { name?: unknown }).name === name),
    );

/** The searches' `tool.requested` events of session "s", whichever call. */
async function searchRequests(store: EventStore): Promise<LedgerEvent[]> {
  return (await readWholeSession(store, "s")).filter(
    (event) =>
      event.type === "tool.requested" &&
      (event.payload as { name?: unknown }).name === "tool_search",
  );
}

/** Resumes run "root" of `store` with a new process's agent, its model going on at turn `calls`. */
async function resumedIn(store: EventStore, calls: number) {
  const second = registryAgent();
  second.model.calls = calls;
  const result = await resumeRun(second.agent, runOptions(store, second.model));
  return { second, result };
}

describe("a tool search the app's execute makes in the process", () => {
  test("is a tool call of the run, its request committed before the callback runs", async () => {
    const store = new MemoryEventStore();
    const made = registryAgent();
    let heldWhileSearching: LedgerEvent[] = [];
    made.beforeSearch = async () => {
      heldWhileSearching = await toolCallEvents(store, "call_search");
    };
    const run = await runWithLedger(made.agent, "go", runOptions(store, made.model));
    expect(run.finalOutput).toBe("sunny in Paris");
    expect(made.searches).toEqual(["weather"]);

    expect(typesOf(heldWhileSearching)).toEqual(["tool.requested"]);
    expect(heldWhileSearching[0]?.payload).toMatchObject({
      toolCallId: "call_search",
      name: "tool_search",
      args: { query: "weather" },
      effect: { kind: "read", idempotent: true },
    });
    const events = await toolCallEvents(store, "call_search");
    expect(typesOf(events)).toEqual(["tool.requested", "tool.completed"]);
    // What it loaded, as JSON: the tools' names, not the live tool objects.
    expect(events[1]?.payload).toMatchObject({ result: [{ type: "function", name: "forecast" }] });
  });

  test("a callback that throws: the search is recorded as failed, and the run fails", async () => {
    const store = new MemoryEventStore();
    const made = registryAgent();
    made.beforeSearch = async () => {
      throw new Error("registry unreachable");
    };
    await expect(runWithLedger(made.agent, "go", runOptions(store, made.model))).rejects.toThrow(
      "registry unreachable",
    );
    const events = await toolCallEvents(store, "call_search");
    expect(typesOf(events)).toEqual(["tool.requested", "tool.failed"]);
    expect(events[1]?.payload).toMatchObject({ error: { message: "registry unreachable" } });
  });

  test("the ledger cannot commit the request: the callback does not run, the run stops open", async () => {
    const store = new FailingStore();
    store.failWhen = appends("tool.requested", "tool_search");
    const made = registryAgent();
    await expect(
      runWithLedger(made.agent, "go", runOptions(store, made.model)),
    ).rejects.toMatchObject({ code: "store-unavailable" });
    expect(made.searches).toEqual([]);
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("running");
  });

  test("ATIF and OpenTelemetry show it once, as a call the process made", async () => {
    const store = new MemoryEventStore();
    const made = registryAgent();
    await runWithLedger(made.agent, "go", runOptions(store, made.model));
    const steps = (await toAtif(store, "s")).steps.filter((step) => step.source === "agent");
    const calls = steps.flatMap((step) => step.tool_calls ?? []);
    // Once: not also as a call the provider ran (its tool_search_call is in the response).
    expect(calls.map((call) => call.function_name)).toEqual(["tool_search", "forecast"]);
    expect(calls[0]).toMatchObject({
      tool_call_id: "call_search",
      arguments: { query: "weather" },
    });
    expect(calls[0]?.extra?.executed_by).toBeUndefined();
    const results = steps.flatMap((step) => step.observation?.results ?? []);
    expect(results[0]).toEqual({
      source_call_id: "call_search",
      content: JSON.stringify([{ type: "function", name: "forecast" }]),
    });

    const spans = await exportedSpans(store, "s", { includeToolContent: true });
    const search = spans.filter((span) => span.name === "execute_tool tool_search");
    expect(search).toHaveLength(1);
    expect(search[0]?.attributes["gen_ai.tool.call.id"]).toBe("call_search");
    expect(search[0]?.attributes["agent_ledger.tool.executed_by"]).toBeUndefined();
  });

  test("a function tool it loads is recorded as the agent's own are", async () => {
    const store = new MemoryEventStore();
    const made = registryAgent();
    await runWithLedger(made.agent, "go", runOptions(store, made.model));
    const events = await toolCallEvents(store, "call_forecast");
    expect(typesOf(events)).toEqual(["tool.requested", "tool.completed"]);
    expect(events[0]?.payload).toMatchObject({
      name: "forecast",
      args: { city: "Paris" },
      effect: { kind: "unknown", idempotent: false },
    });
    expect(events[1]?.payload).toMatchObject({ result: "sunny in Paris" });
  });

  test("streamed: recorded the same way, before the callback runs", async () => {
    const store = new MemoryEventStore();
    const made = registryAgent();
    let heldWhileSearching: LedgerEvent[] = [];
    made.beforeSearch = async () => {
      heldWhileSearching = await toolCallEvents(store, "call_search");
    };
    const run = await runWithLedger(made.agent, "go", {
      ...runOptions(store, made.model),
      stream: true,
    });
    for await (const _event of run.stream) {
      // read the stream
    }
    expect((await run.done).finalOutput).toBe("sunny in Paris");
    expect(typesOf(heldWhileSearching)).toEqual(["tool.requested"]);
    expect(typesOf(await toolCallEvents(store, "call_search"))).toEqual([
      "tool.requested",
      "tool.completed",
    ]);
  });
});

describe("a recorded client tool search on resume", () => {
  test("answered from the ledger: the callback runs again for its live tools, one call recorded", async () => {
    // The store went away at the model call after the search: the run stopped, open.
    const store = new FailingStore();
    const first = registryAgent();
    store.failWhen = (request) => first.searches.length > 0 && appends("model.requested")(request);
    await expect(
      runWithLedger(first.agent, "go", runOptions(store, first.model)),
    ).rejects.toMatchObject({ code: "store-unavailable" });
    expect(typesOf(await toolCallEvents(store, "call_search"))).toEqual([
      "tool.requested",
      "tool.completed",
    ]);

    store.failWhen = undefined;
    const { second, result } = await resumedIn(store, 1);
    expect(result.finalOutput).toBe("sunny in Paris");
    // Run again (a search only reads; the SDK needs the tools it gives), not recorded again.
    expect(second.searches).toEqual(["weather"]);
    expect(await searchRequests(store)).toHaveLength(1);
    expect(typesOf(await toolCallEvents(store, "call_search"))).toEqual([
      "tool.requested",
      "tool.completed",
    ]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
  });

  test("answered from the ledger, it now loads other tools: replay-divergence, the run left open", async () => {
    const store = new FailingStore();
    const first = registryAgent();
    store.failWhen = (request) => first.searches.length > 0 && appends("model.requested")(request);
    await expect(
      runWithLedger(first.agent, "go", runOptions(store, first.model)),
    ).rejects.toMatchObject({ code: "store-unavailable" });

    store.failWhen = undefined;
    const second = registryAgent();
    second.model.calls = 1;
    // The registry no longer has the forecast.
    attachClientToolSearchExecutor(second.agent.tools[0] as HostedTool, async () => []);
    await expect(resumeRun(second.agent, runOptions(store, second.model))).rejects.toMatchObject({
      code: "replay-divergence",
    });
    expect(second.model.requests).toEqual([]);
    expect(await searchRequests(store)).toHaveLength(1);
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("running");
  });

  test("in flight when the run stopped: made again by itself, as its retry (one call)", async () => {
    const store = new FailingStore();
    store.failWhen = appends("tool.completed");
    const first = registryAgent();
    await expect(
      runWithLedger(first.agent, "go", runOptions(store, first.model)),
    ).rejects.toMatchObject({ code: "store-unavailable" });
    expect(first.searches).toEqual(["weather"]);

    store.failWhen = undefined;
    const { second, result } = await resumedIn(store, 1);
    expect(result.status).toBe("completed");
    expect(second.searches).toEqual(["weather"]);
    const [asked, retried] = await searchRequests(store);
    expect(retried?.retryOf).toBe(asked?.attemptId);
    expect(retried?.stepId).toBe(asked?.stepId);
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.filter((call) => call.function_name === "tool_search")).toHaveLength(1);
  });

  test("a run paused after it goes on from its checkpoint: the SDK's reload runs it, unrecorded", async () => {
    const store = new MemoryEventStore();
    const first = registryAgent({ forecastNeedsApproval: true });
    const paused = await runWithLedger(first.agent, "go", runOptions(store, first.model));
    expect(paused.status).toBe("interrupted");

    // A new process: RunState.fromString rebuilds the tools the search loaded by running the
    // callback again, outside the run (the ledger holds the search already).
    const second = registryAgent({ forecastNeedsApproval: true });
    second.model.calls = 2;
    const again = await resumeRun(second.agent, runOptions(store, second.model));
    const { state, item } = firstInterruption(again);
    state.approve(item);
    const result = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
    expect(result.finalOutput).toBe("sunny in Paris");
    expect(second.searches.length).toBeGreaterThan(0);
    expect(await searchRequests(store)).toHaveLength(1);
  });
});

// Each crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts); the test is
// the new process that opens the file and resumes.
const ledgers = new CrashedLedgers("oa-client-tool-search-", { beforeAll, afterAll });
ledgers.prepare(
  "registry: dies inside the tool search",
  "registry: dies after the tool search completed",
);

describe("a client tool search after the process was killed", () => {
  test("inside the search: the resume makes it again by itself, as its retry", async () => {
    const { store, first } = await ledgers.crashed("registry: dies inside the tool search");
    expect(first.effects).toEqual(["search tsc_1"]);
    const { second, result } = await resumedIn(store, 1);
    expect(result.finalOutput).toBe("sunny in Paris");
    expect(second.searches).toEqual(["weather"]);
    const [asked, retried, ...more] = await searchRequests(store);
    expect(more).toEqual([]);
    expect(retried?.retryOf).toBe(asked?.attemptId);
    expect((await inspectSession(store, "s")).unresolved).toEqual([]);
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => call.function_name)).toEqual(["tool_search", "forecast"]);
  });

  test("after it completed: run again for the tools it gives, still one call", async () => {
    const { store, first } = await ledgers.crashed(
      "registry: dies after the tool search completed",
    );
    expect(first.effects).toEqual(["search tsc_1"]);
    const { second, result } = await resumedIn(store, 1);
    expect(result.finalOutput).toBe("sunny in Paris");
    expect(second.searches).toEqual(["weather"]);
    expect(await searchRequests(store)).toHaveLength(1);
    expect(typesOf(await toolCallEvents(store, "call_search"))).toEqual([
      "tool.requested",
      "tool.completed",
    ]);
  });
});
