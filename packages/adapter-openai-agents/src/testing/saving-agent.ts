import { Agent, tool } from "@openai/agents";
import { z } from "zod";
import type { AfterEffect } from "./fixture.js";
import { functionCall, message, ScriptedModel } from "./scripted-model.js";

/** Arguments this large go to the blob store; the event keeps a reference. */
export const LARGE_TEXT = "ä€𝄞 ".repeat(10_000);

/** An agent that saves LARGE_TEXT with its `save` tool, then answers "ok". */
export function savingAgent(afterEffect?: AfterEffect) {
  const saved: string[] = [];
  const save = tool({
    name: "save",
    description: "save a document",
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      saved.push(text);
      await afterEffect?.(`save ${text.length} characters`);
      return "saved";
    },
  });
  const model = new ScriptedModel([
    () => [functionCall("save", { text: LARGE_TEXT }, "call_save")],
    () => [message("ok")],
  ]);
  return { saved, model, agent: new Agent({ name: "main", tools: [save] }) };
}
