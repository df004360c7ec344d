import { MemoryEventStore, messageHistory } from "@agent-ledger/core";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { runWithLedger } from "./index.js";
import { runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

/**
 * An OpenAI Agents reasoning item (agents-core types/protocol.mjs:591, ReasoningItem): its
 * summary in `content`, as the Responses model reads the API's.
 */
function reasoning(id: string, text: string) {
  return { type: "reasoning", id, content: [{ type: "input_text", text }] } as ReturnType<
    typeof message
  >;
}

const lookup = tool({
  name: "lookup",
  description: "read a key",
  parameters: z.object({ key: z.string() }),
  execute: async ({ key }) => `value of ${key}`,
});

describe("messageHistory of an OpenAI Agents run whose answers came with reasoning", () => {
  test("keeps the last answer's reasoning, as it keeps an earlier answer's", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([
      () => [
        reasoning("rs_1", "x is stored: look it up"),
        functionCall("lookup", { key: "x" }, "call_1"),
      ],
      () => [reasoning("rs_2", "the tool said 42"), message("x is 42")],
    ]);
    const agent = new Agent({ name: "main", tools: [lookup] });
    const result = await runWithLedger(agent, "what is x?", runOptions(store, model));
    expect(result.finalOutput).toBe("x is 42");

    const history = await messageHistory(store, { sessionId: "s" });
    expect(history[1]).toEqual({
      role: "assistant",
      content: [{ type: "reasoning", text: "x is stored: look it up" }],
      toolCalls: [{ id: "call_1", name: "lookup", arguments: { key: "x" } }],
    });
    expect(history.at(-1)).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "the tool said 42" },
        { type: "text", text: "x is 42" },
      ],
    });
  });

  test("gives a last answer of reasoning and a tool call as an earlier one is given", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([
      () => [
        reasoning("rs_1", "x is stored: look it up"),
        functionCall("lookup", { key: "x" }, "call_1"),
      ],
    ]);
    const agent = new Agent({
      name: "main",
      tools: [lookup],
      toolUseBehavior: "stop_on_first_tool",
    });
    await runWithLedger(agent, "what is x?", runOptions(store, model));

    const history = await messageHistory(store, { sessionId: "s" });
    expect(history.slice(1)).toEqual([
      {
        role: "assistant",
        content: [{ type: "reasoning", text: "x is stored: look it up" }],
        toolCalls: [{ id: "call_1", name: "lookup", arguments: { key: "x" } }],
      },
      expect.objectContaining({ role: "tool", name: "lookup", content: "value of x" }),
    ]);
  });
});
