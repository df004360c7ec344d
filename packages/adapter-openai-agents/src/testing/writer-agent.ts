import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import { instrumentAgent } from "../instrument-agent.js";
import { ledgerModel } from "../ledger-model.js";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/**
 * "main" calls the agent "writer" as a tool (Agent.asTool); writer's own tool `write` needs
 * approval unless `writeNeedsApproval` is false. Side effects are appended to `effects`. With
 * `instrumented: false` the writer is not given to `instrumentAgent`: its `write` is a plain
 * SDK tool the ledger does not record; with `"model only"` neither, but its model is given to
 * `ledgerModel`, so its child run records its model calls and not its tool calls. With
 * `"partly"` it is instrumented, then given a plain SDK tool `notify` (which its model never
 * asks for): `write` is recorded, but its child run cannot say it records every call.
 */
export function agentToolFixture(
  options: {
    writeNeedsApproval?: boolean;
    afterEffect?: AfterEffect;
    instrumented?: boolean | "model only" | "partly";
  } = {},
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
  const modelOnly = options.instrumented === "model only";
  const plain = new Agent({
    name: "writer",
    tools: [write],
    model: modelOnly ? ledgerModel(writerModel) : writerModel,
  });
  const writer = (
    options.instrumented === false || modelOnly ? plain : instrumentAgent(plain)
  ) as typeof plain;
  if (options.instrumented === "partly")
    writer.tools.push(
      tool({
        name: "notify",
        description: "tell someone",
        parameters: z.object({ text: z.string() }),
        execute: async ({ text }) => `told ${text}`,
      }),
    );
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
