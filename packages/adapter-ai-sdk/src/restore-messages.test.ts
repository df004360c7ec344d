import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreMessages } from "./restore-messages.js";
import {
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
  usage,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const actor = { type: "agent" as const, id: "assistant" };
const address = { sessionId: "chat", runId: "turn-1" };

describe("restoreMessages", () => {
  it("rebuilds the conversation so a chat app can continue it", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, actor, ...address });
    const { model } = scriptedModel([
      toolCallsResult(toolCall("c1", "lookup", { key: "x" }), toolCall("c2", "fail", {})),
      textResult("x is X"),
    ]);
    const tools = wrapTools(
      {
        lookup: tool({
          inputSchema: z.object({ key: z.string() }),
          execute: async ({ key }) => ({ value: key.toUpperCase() }),
        }),
        fail: tool({
          inputSchema: z.object({}),
          execute: async (): Promise<string> => {
            throw new Error("nope");
          },
        }),
      },
      { recorder },
    );
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      system: "you are terse",
      prompt: "what is x?",
      tools,
      stopWhen: stepCountIs(3),
    });

    const messages = await restoreMessages(store, address);
    // The SDK's own view of the conversation, minus nothing: prompt + every response message.
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "what is x?" }] },
      ...result.response.messages.map((message) => JSON.parse(JSON.stringify(message))),
    ]);
    const withSystem = await restoreMessages(store, { ...address, includeSystem: true });
    expect(withSystem[0]).toEqual({ role: "system", content: "you are terse" });

    // The restored messages continue the conversation with the real SDK.
    const next = scriptedModel([textResult("you're welcome")]);
    const followUp = await generateText({
      model: next.model,
      messages: [...messages, { role: "user", content: "thanks" }],
    });
    expect(followUp.text).toBe("you're welcome");
    const prompt = JSON.stringify(next.model.doGenerateCalls[0]?.prompt);
    expect(prompt).toContain('"value":"X"');
    expect(prompt).toContain("nope");
  });

  it("keeps the results of provider-executed tools in the assistant message, as the SDK does", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, actor, ...address });
    // A provider-side tool (web search, code execution): call and result in the response.
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [
          { type: "text", text: "" },
          {
            type: "tool-call",
            toolCallId: "ws-1",
            toolName: "web_search",
            input: '{"query":"order 42"}',
            providerExecuted: true,
          },
          { type: "tool-result", toolCallId: "ws-1", toolName: "web_search", result: { hits: 1 } },
          {
            type: "tool-call",
            toolCallId: "ws-2",
            toolName: "web_search",
            input: '{"query":"order 43"}',
            providerExecuted: true,
          },
          {
            type: "tool-result",
            toolCallId: "ws-2",
            toolName: "web_search",
            result: { reason: "rate limited" },
            isError: true,
          },
          { type: "text", text: "Order 42 shipped." },
        ],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(10, 5),
        warnings: [],
      }),
    });
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "where is order 42?",
    });
    const messages = await restoreMessages(store, address);
    expect(messages).toEqual([
      { role: "user", content: [{ type: "text", text: "where is order 42?" }] },
      ...result.response.messages.map((message) => JSON.parse(JSON.stringify(message))),
    ]);
  });

  it("returns an empty list for a run without model calls", async () => {
    expect(await restoreMessages(new MemoryEventStore(), address)).toEqual([]);
  });
});
