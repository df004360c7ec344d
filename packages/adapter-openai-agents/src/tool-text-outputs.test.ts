import { MemoryEventStore, toAtif } from "@agent-ledger/core";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { runWithLedger } from "./index.js";
import { runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

// A tool that returns one text output ({ type: "text", text }): the SDK gives the model its
// text (runner/toolExecution.mjs:81 makes it an input_text item, which the Responses and chat
// completions models send as text), and ATIF's observation says what the model read.

/** ATIF's observation of a run whose one tool returns `output`, and the model's next input. */
async function observed(output: unknown, endsAtTool: boolean) {
  const store = new MemoryEventStore();
  const report = tool({
    name: "report",
    description: "the sales report",
    parameters: z.object({}),
    execute: async () => output as string,
  });
  const agent = new Agent({
    name: "analyst",
    tools: [report],
    ...(endsAtTool ? { toolUseBehavior: "stop_on_first_tool" as const } : {}),
  });
  const model = new ScriptedModel([
    () => [functionCall("report", {}, "call_1")],
    () => [message("sales are up")],
  ]);
  await runWithLedger(agent, "how are sales?", runOptions(store, model));
  const trajectory = await toAtif(store, "s");
  const result = trajectory.steps.flatMap((step) => step.observation?.results ?? [])[0];
  return { result, next: model.requests[1]?.input };
}

describe("ATIF of a tool's one text output", () => {
  const text = { type: "text", text: "up 4% on Q2" };

  test("is its text when the run ends at the tool", async () => {
    const { result } = await observed(text, true);
    expect(result?.content).toBe("up 4% on Q2");
  });

  test("is its text when the run goes on, the text the model was given", async () => {
    const { result, next } = await observed(text, false);
    expect(next).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          type: "function_call_result",
          output: [{ type: "input_text", text: "up 4% on Q2" }],
        }),
      ]),
    );
    expect(result?.content).toBe("up 4% on Q2");
  });
});
