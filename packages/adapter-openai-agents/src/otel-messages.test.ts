import { MemoryEventStore, messageHistory, toAtif } from "@agent-ledger/core";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { Agent, setTracingDisabled, tool } from "@openai/agents";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { runWithLedger } from "./index.js";
import { runOptions } from "./testing/recorded-run.js";
import { functionCall, message, ScriptedModel } from "./testing/scripted-model.js";

setTracingDisabled(true);

const lookup = tool({
  name: "lookup",
  description: "read a key",
  parameters: z.object({ key: z.string() }),
  execute: async ({ key }) => `value of ${key}`,
});

/**
 * The chat spans of session "s", exported with their messages, in the order they started; and
 * `json(index, attribute)`, the value of the JSON attribute of the chat at `index`.
 */
async function chatSpans(store: MemoryEventStore) {
  const chats = (await exportedSpans(store, "s", { includeMessages: true }))
    .filter((span) => span.attributes["gen_ai.operation.name"] === "chat")
    .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
  const json = (index: number, attribute: string) =>
    JSON.parse(String(chats[index]?.attributes[attribute]));
  return { chats, json };
}

describe("OpenTelemetry chat spans with includeMessages", () => {
  test("carry a run's conversation with a tool call as the conventions' messages, its instructions apart", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([
      () => [functionCall("lookup", { key: "x" }, "call_1")],
      () => [message("x is 42")],
    ]);
    const agent = new Agent({ name: "main", instructions: "You are terse.", tools: [lookup] });
    const result = await runWithLedger(agent, "what is x?", runOptions(store, model));
    expect(result.finalOutput).toBe("x is 42");

    const { chats, json } = await chatSpans(store);
    expect(chats).toHaveLength(2);

    // The agent's instructions reach the model apart from its input: no system message.
    for (const index of [0, 1])
      expect(json(index, "gen_ai.system_instructions")).toEqual([
        { type: "text", content: "You are terse." },
      ]);
    const user = { role: "user", parts: [{ type: "text", content: "what is x?" }] };
    const asked = { type: "tool_call", id: "call_1", name: "lookup", arguments: { key: "x" } };
    expect(json(0, "gen_ai.input.messages")).toEqual([user]);
    expect(json(0, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [asked], finish_reason: "tool_call" },
    ]);
    expect(json(0, "gen_ai.tool.definitions")).toEqual([
      expect.objectContaining({
        type: "function",
        name: "lookup",
        description: "read a key",
        parameters: expect.objectContaining({ type: "object" }),
      }),
    ]);

    expect(json(1, "gen_ai.input.messages")).toEqual([
      user,
      { role: "assistant", parts: [asked] },
      {
        role: "tool",
        parts: [
          {
            type: "tool_call_response",
            id: "call_1",
            // The SDK sends the text of its text output, as the model read it.
            response: "value of x",
          },
        ],
      },
    ]);
    expect(json(1, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "x is 42" }], finish_reason: "stop" },
    ]);
  });

  test("give the calls of one answer as one assistant message, as the model met them", async () => {
    const store = new MemoryEventStore();
    const model = new ScriptedModel([
      () => [
        functionCall("lookup", { key: "x" }, "call_1"),
        functionCall("lookup", { key: "y" }, "call_2"),
      ],
      () => [message("x is 42, y is 7")],
    ]);
    const agent = new Agent({ name: "main", tools: [lookup] });
    await runWithLedger(agent, "what are x and y?", runOptions(store, model));

    const { json } = await chatSpans(store);
    // The SDK sends the answer's two function_call items one after the other (its chat
    // completions converter makes them one assistant message's tool_calls).
    const input = json(1, "gen_ai.input.messages");
    const asked = (id: string, key: string) => ({
      type: "tool_call",
      id,
      name: "lookup",
      arguments: { key },
    });
    expect(input.slice(0, 2)).toEqual([
      { role: "user", parts: [{ type: "text", content: "what are x and y?" }] },
      { role: "assistant", parts: [asked("call_1", "x"), asked("call_2", "y")] },
    ]);
    expect(input.slice(2).map((message: { role: string }) => message.role)).toEqual([
      "tool",
      "tool",
    ]);
    // ATIF agrees: one agent step asked for both.
    const steps = (await toAtif(store, "s")).steps.filter((step) => step.tool_calls);
    expect(steps.map((step) => step.tool_calls?.map((each) => each.tool_call_id))).toEqual([
      ["call_1", "call_2"],
    ]);
  });

  test("give an answer's reasoning as a reasoning part of the assistant message it came with", async () => {
    const store = new MemoryEventStore();
    // An OpenAI Agents reasoning item (agents-core types/protocol.mjs:591, ReasoningItem):
    // its summary in `content`, as the Responses model reads the API's (openaiResponsesModel.mjs:2215).
    const reasoning = {
      type: "reasoning",
      id: "rs_1",
      content: [{ type: "input_text", text: "x is stored: look it up" }],
    } as ReturnType<typeof message>;
    const model = new ScriptedModel([
      () => [reasoning, functionCall("lookup", { key: "x" }, "call_1")],
      () => [message("x is 42")],
    ]);
    const agent = new Agent({ name: "main", tools: [lookup] });
    await runWithLedger(agent, "what is x?", runOptions(store, model));
    // The SDK gives the model its reasoning item back in the next turn's input.
    expect(model.requests[1]?.input).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: "reasoning", id: "rs_1" })]),
    );

    const { json } = await chatSpans(store);
    const thought = { type: "reasoning", content: "x is stored: look it up" };
    const asked = { type: "tool_call", id: "call_1", name: "lookup", arguments: { key: "x" } };
    expect(json(0, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [thought, asked], finish_reason: "tool_call" },
    ]);
    // The next call's input holds that answer as it was given: the reasoning was dropped.
    // The SDK's chat completions converter puts a reasoning item on the assistant message of
    // the function_call items after it (openaiChatCompletionsConverter.mjs:302).
    expect(json(1, "gen_ai.input.messages").slice(1, 3)).toEqual([
      { role: "assistant", parts: [thought, asked] },
      {
        role: "tool",
        parts: [{ type: "tool_call_response", id: "call_1", response: "value of x" }],
      },
    ]);
    // ATIF shows the reasoning where it shows it for the answer: the step's reasoning_content.
    const steps = (await toAtif(store, "s")).steps.filter((step) => step.source === "agent");
    expect(steps.map((step) => step.reasoning_content)).toEqual([
      "x is stored: look it up",
      undefined,
    ]);
    // The history's assistant message holds it as a reasoning part, beside its call.
    const history = await messageHistory(store, { sessionId: "s" });
    expect(history[1]).toEqual({
      role: "assistant",
      content: [{ type: "reasoning", text: "x is stored: look it up" }],
      toolCalls: [{ id: "call_1", name: "lookup", arguments: { key: "x" } }],
    });
  });
});
