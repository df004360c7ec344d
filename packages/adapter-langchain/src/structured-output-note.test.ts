import { providerStrategy, toolStrategy } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { structuredOutputTool } from "./structured-output-calls.js";
import { structuredOutputNote } from "./structured-output-note.js";

const untitled = z.object({ city: z.string() }).describe("The weather");
const titled = z.object({ city: z.string() }).meta({ title: "Weather" });
const agentTools = [{ name: "get_weather" }];

describe("structuredOutputNote: the structured output's tools, as known before the call", () => {
  it("toolStrategy: its tools' names, as it named them", () => {
    const strategy = toolStrategy(titled);
    expect(structuredOutputNote(strategy, agentTools)).toEqual({ tools: ["Weather"] });
  });

  it("a bare schema: its title, as createAgent names the tool; without one, a generated name", () => {
    expect(structuredOutputNote(titled, agentTools)).toEqual({
      tools: ["Weather"],
      generated: false,
      agentTools: ["get_weather"],
    });
    expect(structuredOutputNote([untitled, titled], agentTools)).toEqual({
      tools: ["Weather"],
      generated: true,
      agentTools: ["get_weather"],
    });
    // A JSON schema by its title; a function definition by its name.
    const json = { type: "object", title: "Forecast", properties: {} };
    const definition = { name: "forecast", parameters: { type: "object", properties: {} } };
    expect(structuredOutputNote([json, definition], [])?.tools).toEqual(["Forecast", "forecast"]);
  });

  it("the names agree with those createAgent gives (toolStrategy of the same schema)", () => {
    const formats = [
      titled,
      { type: "object", title: "Forecast", properties: {} },
      { name: "forecast", parameters: { type: "object", properties: {} } },
    ];
    // One at a time, each in a list: LangChain takes no list of mixed kinds, nor a lone definition.
    for (const format of formats)
      expect(structuredOutputNote([format], [])?.tools).toEqual(
        toolStrategy([format] as never).map((strategy) => strategy.name),
      );
  });

  it("providerStrategy, or no responseFormat: none", () => {
    expect(structuredOutputNote(providerStrategy(titled), agentTools)).toBeUndefined();
    expect(structuredOutputNote(undefined, agentTools)).toBeUndefined();
  });
});

describe("structuredOutputTool: the structured output's calls, from a model call's metadata", () => {
  it("by name, and with `generated` any tool createAgent named extract-<n>", () => {
    const named = structuredOutputTool({ method: "toolStrategy", tools: ["Weather"] });
    expect(["Weather", "extract-3", "lookup"].map(named)).toEqual([true, false, false]);
    const generated = structuredOutputTool({ method: "toolStrategy", tools: [], generated: true });
    expect(["extract-3", "extract", "lookup"].map(generated)).toEqual([true, false, false]);
  });

  it("a ledger recorded with the agent's own tools (agentTools): any other tool, as then", () => {
    const recorded = structuredOutputTool({ method: "toolStrategy", agentTools: ["get_weather"] });
    expect(["extract-3", "lookup", "get_weather"].map(recorded)).toEqual([true, true, false]);
  });
});
