import {
  inspectSession,
  type LedgerEvent,
  MemoryEventStore,
  readWholeSession,
  toAtif,
} from "@agent-ledger/core";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CONTEXT_CHANGED_EVENT_TYPE } from "./context-changes.js";
import { resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import {
  mcpRegistryAgent,
  namespacedRegistryAgent,
  type RegistryContext,
} from "./testing/loading-registry-agents.js";
import { firstInterruption, runOptions, toolCallEvents } from "./testing/recorded-run.js";

setTracingDisabled(true);

// What a client tool search loads is called as the agent's own tools are: a namespaced function
// tool is recorded (under its name in its namespace) and answered from the ledger on resume as a
// plain one, a hosted MCP server's
// call is the provider's, inside the model response that holds it. What the search's `execute`
// writes into the run's context is recorded as a function tool's writes are, and given back on
// resume.

const typesOf = (events: LedgerEvent[]) => events.map((event) => event.type);

const NAMESPACED_DIED = "namespaced registry: dies after weather.forecast completed";
const MCP_DIED = "MCP registry: dies in the model call after the provider's MCP call";

// Each crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts); the test is
// the new process that opens the file and resumes.
const ledgers = new CrashedLedgers("oa-client-tool-search-loads-", { beforeAll, afterAll });
ledgers.prepare(NAMESPACED_DIED, MCP_DIED);

describe("a namespaced tool a client tool search loaded", () => {
  test("its call is recorded under its name in its namespace, as a plain function tool's", async () => {
    const store = new MemoryEventStore();
    const made = namespacedRegistryAgent();
    const run = await runWithLedger(made.agent, "go", {
      ...runOptions(store, made.model),
      context: {},
    });
    expect(run.finalOutput).toBe("sunny in Paris");
    expect(made.forecasts).toEqual(["Paris"]);
    const search = await toolCallEvents(store, "call_search");
    expect(search[1]?.payload).toMatchObject({
      result: [{ type: "function", name: "weather.forecast" }],
    });
    const events = await toolCallEvents(store, "call_forecast");
    expect(typesOf(events)).toEqual(["tool.requested", "tool.completed"]);
    expect(events[0]?.payload).toMatchObject({
      name: "weather.forecast",
      args: { city: "Paris" },
    });
    expect(events[1]?.payload).toMatchObject({ result: "sunny in Paris (registry v1)" });
  });

  test("after the process was killed past its call: answered from the ledger, not made again", async () => {
    const { store } = await ledgers.crashed(NAMESPACED_DIED);
    const second = namespacedRegistryAgent();
    second.model.calls = 2;
    const result = await resumeRun(second.agent, {
      ...runOptions(store, second.model),
      context: {},
    });
    expect(result.finalOutput).toBe("sunny in Paris");
    // The search ran again for its live tools; the forecast did not.
    expect(second.searches).toEqual(["weather"]);
    expect(second.forecasts).toEqual([]);
    expect(typesOf(await toolCallEvents(store, "call_forecast"))).toEqual([
      "tool.requested",
      "tool.completed",
    ]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
  });
});

describe("a hosted MCP server a client tool search loaded", () => {
  test("the provider's call of it is in the model response, shown once", async () => {
    const store = new MemoryEventStore();
    const made = mcpRegistryAgent();
    const run = await runWithLedger(made.agent, "go", runOptions(store, made.model));
    expect(run.finalOutput).toBe("main and dev");
    const search = await toolCallEvents(store, "call_search");
    expect(search[1]?.payload).toMatchObject({ result: [{ type: "mcp", server_label: "repo" }] });
    // The MCP tools reach the model: the request after the search names the server.
    expect(JSON.stringify(made.model.requests[1]?.tools)).toContain("repo");
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => [call.function_name, call.extra?.executed_by])).toEqual([
      ["tool_search", undefined],
      ["list_branches", "provider"],
    ]);
  });

  test("after the process was killed past its call: the response holding it is answered from the ledger", async () => {
    const { store, first } = await ledgers.crashed(MCP_DIED);
    expect(first.modelInputs).toHaveLength(3);
    const second = mcpRegistryAgent();
    second.model.calls = 2;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.finalOutput).toBe("main and dev");
    expect(second.searches).toEqual(["branches"]);
    // Only the model call the process died in is made again.
    expect(second.model.requests).toHaveLength(1);
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.filter((call) => call.function_name === "list_branches")).toHaveLength(1);
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("completed");
  });
});

describe("what a client tool search wrote into the run's context", () => {
  test("is recorded as x.openai-agents.context with the search's attempt, before its completion", async () => {
    const store = new MemoryEventStore();
    const made = namespacedRegistryAgent();
    await runWithLedger(made.agent, "go", { ...runOptions(store, made.model), context: {} });
    const [requested] = await toolCallEvents(store, "call_search");
    const events = (await readWholeSession(store, "s")).filter(
      (event) => event.attemptId === requested?.attemptId,
    );
    expect(typesOf(events)).toEqual([
      "tool.requested",
      CONTEXT_CHANGED_EVENT_TYPE,
      "tool.completed",
    ]);
    expect(events[1]?.payload).toEqual({
      toolCallId: "call_search",
      set: { registry: "v1" },
      deleted: [],
    });
  });

  test("after the process was killed: the resumed run has what the search wrote then, not what running it again writes", async () => {
    const { store } = await ledgers.crashed(NAMESPACED_DIED);
    // This process's registry is at another version.
    const second = namespacedRegistryAgent({ version: "v2" });
    second.model.calls = 2;
    const context: RegistryContext = {};
    await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(second.searches).toEqual(["weather"]);
    expect(context.registry).toBe("v1");
  });

  test("a run paused after it goes on from its checkpoint with the app's context: the search's write is given, and the tool called next reads it", async () => {
    const store = new MemoryEventStore();
    const first = namespacedRegistryAgent({ forecastNeedsApproval: true });
    const paused = await runWithLedger(first.agent, "go", {
      ...runOptions(store, first.model),
      context: {},
    });
    expect(paused.status).toBe("interrupted");

    // A new process with a context of its own: the SDK's reload of the checkpoint runs the
    // search on the state's JSON copy of the context, not on this one.
    const second = namespacedRegistryAgent({ forecastNeedsApproval: true });
    second.model.calls = 2;
    const context: RegistryContext = {};
    const again = await resumeRun(second.agent, { ...runOptions(store, second.model), context });
    expect(context.registry).toBe("v1");
    const { state, item } = firstInterruption(again);
    state.approve(item);
    await resumeRun(second.agent, { ...runOptions(store, second.model), state, context });
    expect(second.forecasts).toEqual(["Paris"]);
    expect((await toolCallEvents(store, "call_forecast"))[1]?.payload).toMatchObject({
      result: "sunny in Paris (registry v1)",
    });
  });
});
