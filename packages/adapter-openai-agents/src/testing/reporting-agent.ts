import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/** Tool outputs the JSON of a ledger cannot hold as they are, by name. */
export const AWKWARD_OUTPUTS = {
  nothing: () => undefined,
  "not plain JSON": () => ({ id: 7, note: undefined, at: new Date(0), delta: -0 }),
  "a Date": () => new Date(0),
  NaN: () => Number.NaN,
  Infinity: () => Number.POSITIVE_INFINITY,
  // A tool that truncates by UTF-16 units, as `slice` does: half of the emoji stays.
  "half an emoji": () => "price 7 😀".slice(0, -1),
} satisfies Record<string, () => unknown>;

export type AwkwardOutput = keyof typeof AWKWARD_OUTPUTS;

/** An agent whose one tool, `report`, returns `output` twice, then answers with what it saw. */
export function reportingAgent(output: () => unknown, afterEffect?: AfterEffect) {
  const effects: string[] = [];
  const report = tool({
    name: "report",
    description: "send a report",
    parameters: z.object({}),
    execute: async () => {
      effects.push("sent");
      await afterEffect?.("sent");
      return output();
    },
  });
  const model = new ScriptedModel([
    () => [functionCall("report", {}, "call_1")],
    () => [functionCall("report", {}, "call_2")],
    (request) => [message(`saw ${JSON.stringify(request.input).length}`)],
  ]);
  return { effects, model, agent: new Agent({ name: "main", tools: [report] }) };
}
