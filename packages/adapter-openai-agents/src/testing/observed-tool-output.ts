import { MemoryEventStore, toAtif } from "@agent-ledger/core";
import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { runWithLedger } from "../run-with-ledger.js";
import { runOptions } from "./recorded-run.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/**
 * A recorded run of an agent whose one tool, `chart`, returns `output`: the model asks for it
 * (call_1), then the run ends at the tool, or goes on to a model call that answers. Returns ATIF's
 * observation of the tool call (its first result), the whole trajectory, and the model's input
 * in the call after the tool (none where the run ended at it).
 */
export async function observedToolOutput(options: { output: unknown; endsAtTool: boolean }) {
  const store = new MemoryEventStore();
  const chart = tool({
    name: "chart",
    description: "the sales chart",
    parameters: z.object({}),
    execute: async () => options.output as string,
  });
  const agent = new Agent({
    name: "analyst",
    instructions: "read",
    tools: [chart],
    ...(options.endsAtTool ? { toolUseBehavior: "stop_on_first_tool" as const } : {}),
  });
  const model = new ScriptedModel([
    () => [functionCall("chart", {}, "call_1")],
    () => [message("sales are up")],
  ]);
  await runWithLedger(agent, "show the chart", runOptions(store, model));
  const trajectory = await toAtif(store, "s");
  const result = trajectory.steps.flatMap((step) => step.observation?.results ?? [])[0];
  return { result, trajectory, next: model.requests[1]?.input };
}
