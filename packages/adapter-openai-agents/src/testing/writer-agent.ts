import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { instrumentAgent } from "../instrument-agent.js";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/**
 * "main" calls the agent "writer" as a tool (Agent.asTool); writer's own tool `write` needs
 * approval unless `writeNeedsApproval` is false. Side effects are appended to `effects`. With
 * `instrumented: false` the writer is not given to `instrumentAgent`: its `write` is a plain
 * SDK tool the ledger does not record.
 */
export function agentToolFixture(
  options: { writeNeedsApproval?: boolean; afterEffect?: AfterEffect; instrumented?: boolean } = {},
) {
  const effects: string[] = [];
  const writerModel = new ScriptedModel([
    () => [functionCall("write", { text: "héllo 🌍" }, "call_write")],
    () => [message("written")],
  ]);
  const write = tool({
    name: "write",
    description: "write a text",
    parameters: z.object({ text: z.string() }),
    needsApproval: options.writeNeedsApproval ?? true,
    execute: async ({ text }) => {
      effects.push(`write ${text}`);
      await options.afterEffect?.(`write ${text}`);
      return "ok";
    },
  });
  const plain = new Agent({ name: "writer", tools: [write], model: writerModel });
  const writer = (options.instrumented === false ? plain : instrumentAgent(plain)) as typeof plain;
  const main = new Agent({
    name: "main",
    tools: [writer.asTool({ toolName: "writer_tool", toolDescription: "writes texts" })],
  });
  const model = new ScriptedModel([
    () => [functionCall("writer_tool", { input: "write hello" }, "call_writer")],
    (request) => [message(JSON.stringify(request.input).includes("written") ? "done" : "not done")],
  ]);
  return { effects, main, model, writerModel };
}
