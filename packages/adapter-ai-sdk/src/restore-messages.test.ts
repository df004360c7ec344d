import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreMessages } from "./restore-messages.js";
import {
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
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

  it("returns an empty list for a run without model calls", async () => {
    expect(await restoreMessages(new MemoryEventStore(), address)).toEqual([]);
  });
});
