import { MemoryEventStore } from "@agent-ledger/core";
import { Agent, Runner, setTracingDisabled, tool, toolNamespace } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { resumeRun, runWithLedger } from "./index.js";
import { instrumentAgent } from "./instrument-agent.js";
import { ledgerTool } from "./ledger-tool.js";
import { firstInterruption, runOptions, toolCallEvents } from "./testing/recorded-run.js";
import {
  functionCall,
  message,
  ScriptedModel,
  scriptedProvider,
} from "./testing/scripted-model.js";

setTracingDisabled(true);

// The model's one response: the namespace's forecast for Rome and the top-level one for Paris.
const bothForecasts = () => [
  { ...functionCall("forecast", { city: "Rome" }, "call_weather"), namespace: "weather" },
  functionCall("forecast", { city: "Paris" }, "call_top"),
];

/**
 * A top-level `forecast` that asks a person before each call, wrapped with `ledgerTool` (unless
 * `wrapped` is false: the plain SDK), and its copy in the namespace `weather` (`toolNamespace`
 * copies a tool's properties), on which the app set a policy of its own that never asks. The
 * model calls both at once (`bothForecasts`); the cities forecast go to `forecasts`.
 */
function forecastAndItsCopy(options: { wrapped: boolean }) {
  const forecasts: string[] = [];
  const forecast = tool({
    name: "forecast",
    description: "the weather forecast of a city",
    parameters: z.object({ city: z.string() }),
    needsApproval: true,
    execute: async ({ city }) => {
      forecasts.push(city);
      return `sunny in ${city}`;
    },
  });
  const top = options.wrapped ? ledgerTool(forecast) : forecast;
  const [copy] = toolNamespace({ name: "weather", description: "weather tools", tools: [top] });
  if (!copy) throw new Error("toolNamespace made no copy");
  copy.needsApproval = async () => false;
  return { forecasts, tools: [top, copy] };
}

describe("a namespace's copy of a tool wrapped with ledgerTool", () => {
  test("a policy the app sets on the copy is the copy's: the tool itself still asks, as in the SDK", async () => {
    const plain = forecastAndItsCopy({ wrapped: false });
    const plainModel = new ScriptedModel([bothForecasts, () => [message("done")]]);
    const expected = await new Runner({ modelProvider: scriptedProvider(plainModel) }).run(
      new Agent({ name: "main", tools: plain.tools }),
      "go",
    );
    expect(expected.interruptions.map((item) => item.name)).toEqual(["forecast"]);
    expect(plain.forecasts).toEqual(["Rome"]);

    // The copy shared the tool's policy: setting it on the copy let the top-level forecast run
    // without the approval it asks for.
    const made = forecastAndItsCopy({ wrapped: true });
    const model = new ScriptedModel([bothForecasts, () => [message("done")]]);
    const store = new MemoryEventStore();
    const paused = await runWithLedger(
      new Agent({ name: "main", tools: made.tools }),
      "go",
      runOptions(store, model),
    );
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["forecast"]);
    expect(made.forecasts).toEqual(["Rome"]);
  });

  test("inside an agent tool, where the ledger's approval function asks each: each by its own policy", async () => {
    const made = forecastAndItsCopy({ wrapped: true });
    const inner = instrumentAgent(
      new Agent({
        name: "Inner",
        tools: made.tools,
        model: new ScriptedModel([bothForecasts, () => [message("inner done")]]),
      }),
    );
    const outer = new Agent({
      name: "Outer",
      tools: [inner.asTool({ toolName: "inner", toolDescription: "forecasts" })],
    });
    const model = new ScriptedModel([
      () => [functionCall("inner", { input: "go" }, "call_inner")],
      () => [message("outer done")],
    ]);
    const paused = await runWithLedger(outer, "go", runOptions(new MemoryEventStore(), model));
    expect(paused.status).toBe("interrupted");
    expect(paused.interruptions.map((item) => item.name)).toEqual(["forecast"]);
    expect(made.forecasts).toEqual(["Rome"]);
  });
});

/**
 * A top-level `forecast` and, in the namespace `weather`, another tool named `forecast`; the
 * one named `asks` ("forecast" or "weather.forecast") asks a person before each call. The model
 * calls the other one first (`call_first`), then the one that asks (`call_asks`), then answers.
 * The calls made go to `forecasts`, as `<name>:<city>`.
 */
function sameBareNames(asks: string) {
  const forecasts: string[] = [];
  const forecast = (name: string) =>
    tool({
      name: "forecast",
      description: `the ${name} of a city`,
      parameters: z.object({ city: z.string() }),
      needsApproval: name === asks,
      execute: async ({ city }) => {
        forecasts.push(`${name}:${city}`);
        return `${name} in ${city}`;
      },
    });
  const namespaced = toolNamespace({
    name: "weather",
    description: "weather tools",
    tools: [forecast("weather.forecast")],
  });
  const callOf = (name: string, city: string, callId: string) =>
    name === "forecast"
      ? functionCall("forecast", { city }, callId)
      : { ...functionCall("forecast", { city }, callId), namespace: "weather" };
  const other = asks === "forecast" ? "weather.forecast" : "forecast";
  const model = new ScriptedModel([
    () => [callOf(other, "Paris", "call_first")],
    () => [callOf(asks, "Rome", "call_asks")],
    () => [message("done")],
  ]);
  const agent = new Agent({ name: "main", tools: [forecast("forecast"), ...namespaced] });
  return { forecasts, model, agent };
}

describe("a namespaced tool and a top-level tool of the same bare name", () => {
  // Going on from the pause's RunState, the ledger knows the calls of the paused turn only from
  // the names it recorded: the recorded call of one tool must not answer for the other.
  test.each(["weather.forecast", "forecast"])(
    "%s waits for a person after the other ran: asked again until decided, then run once; the other is not made again",
    async (asks) => {
      const store = new MemoryEventStore();
      const first = sameBareNames(asks);
      const paused = await runWithLedger(first.agent, "go", runOptions(store, first.model));
      expect(paused.interruptions.map((item) => item.name)).toEqual([asks]);
      const other = asks === "forecast" ? "weather.forecast" : "forecast";
      expect(first.forecasts).toEqual([`${other}:Paris`]);

      const second = sameBareNames(asks);
      second.model.calls = 2;
      const polled = await resumeRun(second.agent, runOptions(store, second.model));
      expect(polled.interruptions.map((item) => item.name)).toEqual([asks]);
      expect(second.forecasts).toEqual([]);

      const { state, item } = firstInterruption(polled);
      state.approve(item);
      const done = await resumeRun(second.agent, { ...runOptions(store, second.model), state });
      expect(done).toMatchObject({ status: "completed", finalOutput: "done" });
      expect(second.forecasts).toEqual([`${asks}:Rome`]);
      const [requested] = await toolCallEvents(store, "call_asks");
      expect(requested?.payload).toMatchObject({ name: asks, args: { city: "Rome" } });
      expect((await toolCallEvents(store, "call_first")).map((event) => event.type)).toEqual([
        "tool.requested",
        "tool.completed",
      ]);
    },
  );
});
