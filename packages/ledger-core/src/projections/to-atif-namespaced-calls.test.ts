import { describe, expect, it } from "vitest";
import { messageHistory } from "./message-history.js";
import { startedRecorder } from "./session-fixture.test.data.js";
import { toAtif } from "./to-atif.js";

// The Responses API names a call of a tool in a namespace by its bare name with the namespace
// beside it (`{ type: "function_call", name: "forecast", namespace: "weather" }`, as OpenAI
// Agents records its output items); two namespaces may each hold a tool of that name. OpenAI
// Agents' adapter records the call as `weather.forecast`, the SDK's own name for it.

const forecastIn = (namespace: string, callId: string) => ({
  type: "function_call",
  callId,
  name: "forecast",
  namespace,
  arguments: '{"city":"Paris"}',
});

async function askedRun() {
  const { store, recorder } = await startedRecorder("s");
  const attempt = await recorder.beforeModelCall({
    request: { input: [{ role: "user", content: "forecasts" }] },
  });
  await recorder.modelCompleted(attempt, {
    output: [forecastIn("weather", "call_weather"), forecastIn("climate", "call_climate")],
  });
  return { store, recorder };
}

describe("toAtif a call of a namespaced tool", () => {
  it("names a call the model asked for and no tool made (awaiting a decision) in its namespace", async () => {
    // Both were `forecast`: the calls of two namespaces' tools looked the same.
    const { store } = await askedRun();
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => [call.tool_call_id, call.function_name])).toEqual([
      ["call_weather", "weather.forecast"],
      ["call_climate", "climate.forecast"],
    ]);
  });

  it("names a call in the history a request gives the model in its namespace", async () => {
    const { store, recorder } = await askedRun();
    await recorder.beforeModelCall({
      request: {
        input: [
          { role: "user", content: "forecasts" },
          forecastIn("weather", "call_weather"),
          { type: "function_call_result", callId: "call_weather", output: "sunny" },
        ],
      },
    });
    const history = await messageHistory(store, { sessionId: "s" });
    const asked = history.flatMap((message) => message.toolCalls ?? []);
    expect(asked.map((call) => call.name)).toContain("weather.forecast");
    expect(asked.map((call) => call.name)).not.toContain("forecast");
  });

  it("keeps the plain name of a deferred top-level tool, called in a namespace of its own name", async () => {
    const { store, recorder } = await startedRecorder("s");
    const attempt = await recorder.beforeModelCall({ request: { input: "forecast" } });
    await recorder.modelCompleted(attempt, { output: [forecastIn("forecast", "call_1")] });
    const calls = (await toAtif(store, "s")).steps.flatMap((step) => step.tool_calls ?? []);
    expect(calls.map((call) => call.function_name)).toEqual(["forecast"]);
  });
});
