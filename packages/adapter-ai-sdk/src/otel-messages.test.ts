import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  scriptedModel,
  assistantRecorder as setup,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

describe("OpenTelemetry chat spans with includeMessages", () => {
  it("carry a generateText conversation with a tool call as the conventions' messages", async () => {
    const { store, recorder } = setup();
    const { model } = scriptedModel([
      toolCallsResult(toolCall("call-1", "weather", { city: "Paris" })),
      textResult("Paris 21"),
    ]);
    const tools = wrapTools(
      {
        weather: tool({
          description: "weather of a city",
          inputSchema: z.object({ city: z.string() }),
          execute: async ({ city }) => ({ city, celsius: 21 }),
        }),
      },
      { recorder },
    );
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      system: "You are terse.",
      prompt: "weather in Paris?",
      tools,
      stopWhen: stepCountIs(3),
    });
    expect(result.text).toBe("Paris 21");
    await recorder.completeRun(result.text);

    const chats = (await exportedSpans(store, "s1", { includeMessages: true }))
      .filter((span) => span.attributes["gen_ai.operation.name"] === "chat")
      .sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
    const json = (index: number, attribute: string) =>
      JSON.parse(String(chats[index]?.attributes[attribute]));
    expect(chats).toHaveLength(2);

    // The AI SDK gives the system prompt as the prompt's first message: it stays there.
    const system = { role: "system", parts: [{ type: "text", content: "You are terse." }] };
    const user = { role: "user", parts: [{ type: "text", content: "weather in Paris?" }] };
    const asked = {
      type: "tool_call",
      id: "call-1",
      name: "weather",
      arguments: { city: "Paris" },
    };
    expect(json(0, "gen_ai.input.messages")).toEqual([system, user]);
    expect(json(0, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [asked], finish_reason: "tool-calls" },
    ]);
    expect(json(0, "gen_ai.tool.definitions")).toEqual([
      expect.objectContaining({
        type: "function",
        name: "weather",
        description: "weather of a city",
        parameters: expect.objectContaining({ type: "object" }),
      }),
    ]);
    expect(chats[0]?.attributes["gen_ai.system_instructions"]).toBeUndefined();

    const [, , assistantTurn, toolTurn] = json(1, "gen_ai.input.messages");
    expect(assistantTurn).toEqual({ role: "assistant", parts: [asked] });
    expect(toolTurn).toEqual({
      role: "tool",
      parts: [
        {
          type: "tool_call_response",
          id: "call-1",
          // The tool's result itself: the SDK wrapped it in a `json` output for the model.
          response: { city: "Paris", celsius: 21 },
        },
      ],
    });
    expect(json(1, "gen_ai.output.messages")).toEqual([
      { role: "assistant", parts: [{ type: "text", content: "Paris 21" }], finish_reason: "stop" },
    ]);
  });
});
