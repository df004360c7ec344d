import { messageHistory } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  recordingAssistant,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

describe("messageHistory of an AI SDK run whose answers came with reasoning", () => {
  it("gives the last answer's reasoning as a reasoning part before its text, as the SDK gives an earlier one's", async () => {
    const { store, recorder } = recordingAssistant();
    const answer = textResult("x is 42");
    const { model } = scriptedModel([
      toolCallsResult(
        { type: "reasoning", text: "x is stored: look it up" },
        toolCall("call-1", "lookup", { key: "x" }),
      ),
      { ...answer, content: [{ type: "reasoning", text: "the tool said 42" }, ...answer.content] },
    ]);
    const tools = wrapTools(
      {
        lookup: tool({
          inputSchema: z.object({ key: z.string() }),
          execute: async ({ key }) => `value of ${key}`,
        }),
      },
      { recorder },
    );
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "what is x?",
      tools,
      stopWhen: stepCountIs(2),
    });

    const history = await messageHistory(store, { sessionId: "s" });
    // The SDK's own assistant message of the first answer, as the second request gave it.
    expect(history[1]).toMatchObject({
      role: "assistant",
      content: [
        { type: "reasoning", text: "x is stored: look it up" },
        { type: "tool-call", toolCallId: "call-1" },
      ],
      toolCalls: [{ id: "call-1", name: "lookup", arguments: { key: "x" } }],
    });
    expect(history.at(-1)).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "the tool said 42" },
        { type: "text", text: "x is 42" },
      ],
    });
  });
});
