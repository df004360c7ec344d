import { type EventStore, inspectSession, MemoryEventStore, toAtif } from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { setTracingDisabled } from "@openai/agents";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { resumeRun, runWithLedger } from "./index.js";
import { CrashedLedgers } from "./testing/crashed-ledgers.test.data.js";
import {
  namespacedRegistryAgent,
  twoNamespacesRegistryAgent,
} from "./testing/loading-registry-agents.js";
import { runOptions, toolCallEvents } from "./testing/recorded-run.js";

setTracingDisabled(true);

// Two namespaces a client tool search loaded each hold a tool named `forecast`: each call is
// recorded under the name the model called it by, qualified by its namespace, so the ledger's
// views tell them apart; a resume answers each from the ledger by its call id, a run recorded
// under the bare name (before the adapter named the namespace) included.

const DIED = "two namespaces: dies after both forecasts completed";
const DIED_BARE = "two namespaces recorded under bare names: dies after both forecasts completed";

// Each crash is real: the first process runs in a child recording to a SQLite file and is
// SIGKILLed at the scenario's crash point (testing/crash-scenarios.test.data.ts).
const ledgers = new CrashedLedgers("oa-namespaced-tool-names-", { beforeAll, afterAll });
ledgers.prepare(DIED, DIED_BARE);

const requestedName = async (store: EventStore, id: string) =>
  ((await toolCallEvents(store, id))[0]?.payload as { name?: string } | undefined)?.name;

describe("a call of a namespaced tool", () => {
  test("is recorded under its namespace and name, as the model called it, and shown so", async () => {
    const store = new MemoryEventStore();
    const made = twoNamespacesRegistryAgent();
    const run = await runWithLedger(made.agent, "go", runOptions(store, made.model));
    expect(run.finalOutput).toBe("sunny and mild in Paris");
    expect(made.forecasts.sort()).toEqual(["climate:Paris", "weather:Paris"]);
    expect(await requestedName(store, "call_weather")).toBe("weather.forecast");
    expect(await requestedName(store, "call_climate")).toBe("climate.forecast");
    expect((await toolCallEvents(store, "call_weather"))[1]?.payload).toMatchObject({
      result: "sunny in Paris",
    });

    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => [call.tool_call_id, call.function_name])).toEqual([
      ["call_search", "tool_search"],
      ["call_weather", "weather.forecast"],
      ["call_climate", "climate.forecast"],
    ]);
    const inspection = await inspectSession(store, "s");
    const names = inspection.runs[0]?.steps.flatMap((step) =>
      step.attempts.map((attempt) => attempt.name),
    );
    expect(names?.filter((name) => name?.endsWith("forecast")).sort()).toEqual([
      "climate.forecast",
      "weather.forecast",
    ]);
    const spans = (await exportedSpans(store, "s")).map((span) => span.name);
    expect(spans).toEqual(
      expect.arrayContaining(["execute_tool weather.forecast", "execute_tool climate.forecast"]),
    );
  });

  test("wrapped by the app before it was put in its namespace: recorded once, in its namespace, with the effect the app declared", async () => {
    // Each call was recorded twice: under the default effect by the search's wrapping of the
    // namespace's copy, then as forecast inside it, on a child run of its own.
    const store = new MemoryEventStore();
    const made = twoNamespacesRegistryAgent({ wrappedFirst: true });
    const run = await runWithLedger(made.agent, "go", runOptions(store, made.model));
    expect(run.finalOutput).toBe("sunny and mild in Paris");
    const events = await toolCallEvents(store, "call_climate");
    expect(events.map((event) => [event.runId, event.type])).toEqual([
      ["root", "tool.requested"],
      ["root", "tool.completed"],
    ]);
    expect(events[0]?.payload).toMatchObject({
      name: "climate.forecast",
      effect: { kind: "read", idempotent: true },
    });
    expect((await inspectSession(store, "s")).runs.map((run) => run.children)).toEqual([[]]);
  });

  test("after the process was killed past both calls: each is answered from the ledger by its call id, none made again", async () => {
    const { store } = await ledgers.crashed(DIED);
    const second = twoNamespacesRegistryAgent();
    second.model.calls = 2;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.finalOutput).toBe("sunny and mild in Paris");
    expect(second.searches).toEqual(["forecasts"]);
    expect(second.forecasts).toEqual([]);
    // The model was given each namespace's own answer again.
    const outputs = JSON.stringify(second.model.requests[0]?.input);
    expect(outputs).toContain("sunny in Paris");
    expect(outputs).toContain("mild in Paris");
    expect((await toolCallEvents(store, "call_climate")).map((event) => event.type)).toEqual([
      "tool.requested",
      "tool.completed",
    ]);
    const inspection = await inspectSession(store, "s");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
  });

  test("recorded under its bare name before the adapter named the namespace: still answered from the ledger on resume", async () => {
    const { store } = await ledgers.crashed(DIED_BARE);
    expect(await requestedName(store, "call_weather")).toBe("forecast");
    const second = twoNamespacesRegistryAgent();
    second.model.calls = 2;
    const result = await resumeRun(second.agent, runOptions(store, second.model));
    expect(result.finalOutput).toBe("sunny and mild in Paris");
    expect(second.forecasts).toEqual([]);
    const outputs = JSON.stringify(second.model.requests[0]?.input);
    expect(outputs).toContain("sunny in Paris");
    expect(outputs).toContain("mild in Paris");
    expect((await inspectSession(store, "s")).runs[0]?.status).toBe("completed");
    // Each call is shown once, under the name it was recorded under.
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => [call.tool_call_id, call.function_name])).toEqual([
      ["call_search", "tool_search"],
      ["call_weather", "forecast"],
      ["call_climate", "forecast"],
    ]);
  });

  test("awaiting a person's decision: named in its namespace, as the SDK's interruption names it", async () => {
    const store = new MemoryEventStore();
    const made = namespacedRegistryAgent({ forecastNeedsApproval: true });
    const paused = await runWithLedger(made.agent, "go", {
      ...runOptions(store, made.model),
      context: {},
    });
    expect(paused.interruptions.map((item) => item.name)).toEqual(["weather.forecast"]);
    const trajectory = await toAtif(store, "s");
    const calls = trajectory.steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => [call.function_name, call.extra?.status])).toEqual([
      ["tool_search", "completed"],
      ["weather.forecast", "awaiting-decision"],
    ]);
    expect(trajectory.extra).toMatchObject({
      awaiting_decision: { calls: [{ name: "weather.forecast", tool_call_id: "call_forecast" }] },
    });
  });
});
