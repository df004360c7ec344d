import { join } from "node:path";
import { LedgerError, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreConversation, restoreMessages } from "./restore-messages.js";
import { CRASHED_CHAT, crashChatInsideTool } from "./testing/crashing-chat.test.data.js";
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
const scratch = scratchDirectory("ai-sdk-restore-", { beforeAll, afterAll });

/** The ledger of a chat SIGKILLed inside its second tool call (call_0, as the first). */
async function crashedChat(name: string) {
  const path = join(scratch, `${name}.db`);
  await crashChatInsideTool(path);
  const store = new SqliteEventStore({ path });
  await store.init();
  return store;
}

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

  it("with the run's tools, gives a tool call the input its schema parsed, as the SDK's messages hold it", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, actor, ...address });
    const { model } = scriptedModel([
      toolCallsResult(toolCall("c1", "lookup", { key: "x" })),
      textResult("x is X"),
    ]);
    const tools = {
      lookup: tool({
        // The model leaves out `limit`: the schema fills it in, and the SDK keeps that.
        inputSchema: z.object({ key: z.string(), limit: z.number().default(3) }),
        execute: async ({ key, limit }) => `${key.toUpperCase()} (${limit})`,
      }),
    };
    const result = await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "what is x?",
      tools: wrapTools(tools, { recorder }),
      stopWhen: stepCountIs(1),
    });
    expect(JSON.stringify(result.response.messages[0])).toContain('"input":{"key":"x","limit":3}');
    expect(await restoreMessages(store, { ...address, tools })).toEqual([
      { role: "user", content: [{ type: "text", text: "what is x?" }] },
      ...result.response.messages.map((message) => JSON.parse(JSON.stringify(message))),
    ]);
    // Without them, the model's input: the ledger knows no schema.
    const [, assistantMessage] = await restoreMessages(store, address);
    expect(assistantMessage?.content).toEqual([
      { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { key: "x" } },
    ]);
  });

  it("with resolve: false, a prompt kept in the blob store as a whole is refused at $.resolve, not a TypeError", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, actor, ...address });
    const { model } = scriptedModel([textResult("noted")]);
    // Twelve short messages: no string is long enough for a blob of its own, the list is.
    const messages = Array.from({ length: 12 }, (_, index) => ({
      role: "user" as const,
      content: `note ${index}: ${"x".repeat(300)}`,
    }));
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      messages,
    });
    const error = await restoreMessages(store, { ...address, resolve: false }).catch(
      (caught: unknown) => caught,
    );
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect(error).toMatchObject({ path: "$.resolve" });
    expect((error as Error).message).toMatch(/prompt of the model call at seq \d+ of run turn-1/);
    // Resolved (the default), it is the conversation.
    const restored = await restoreMessages(store, address);
    expect(restored.slice(0, 12)).toEqual(
      messages.map(({ role, content }) => ({ role, content: [{ type: "text", text: content }] })),
    );
  });

  it("refuses an includeSystem or resolve that is not a boolean, before reading the store", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, actor, ...address });
    const { model } = scriptedModel([textResult("hi")]);
    await generateText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      system: "you are terse",
      prompt: "hello",
    });
    const readRun = vi.spyOn(store, "readRun");
    for (const [options, path] of [
      [{ includeSystem: "yes" }, "$.includeSystem"],
      [{ resolve: "no" }, "$.resolve"],
    ] as const) {
      const error = await restoreConversation(store, { ...address, ...(options as object) }).catch(
        (caught: unknown) => caught,
      );
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe(path);
      expect((error as LedgerError).message).toMatch(
        /expected a boolean, got the string "(yes|no)"/,
      );
    }
    // Not an options object, or an option it does not take (`includeSytem` left the system
    // prompt out without a word): refused at its path, before reading.
    for (const [options, path, message] of [
      [undefined, "$", /expected options \{ sessionId, runId \}, got undefined/],
      ["s", "$", /got the string "s"/],
      [{ ...address, includeSytem: true }, "$.includeSytem", /has no option "includeSytem"/],
    ] as const) {
      const error = await restoreConversation(store, options as never).catch(
        (caught: unknown) => caught,
      );
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe(path);
      expect((error as LedgerError).message).toMatch(message);
    }
    expect(readRun).not.toHaveBeenCalled();
    // A boolean is taken: the system message is kept.
    const kept = await restoreMessages(store, { ...address, includeSystem: true });
    expect(kept[0]).toEqual({ role: "system", content: "you are terse" });
  });

  it("with the store left out, says the store is missing, not that the options are", async () => {
    for (const restore of [restoreMessages, restoreConversation]) {
      const error = await (restore as (...args: unknown[]) => Promise<unknown>)(address).catch(
        (caught: unknown) => caught,
      );
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe("$.store");
      expect((error as LedgerError).message).toBe(
        "$.store: an EventStore is needed (openStore(url) makes one), got object",
      );
    }
  });

  it("returns an empty list for a run without model calls", async () => {
    const store = new MemoryEventStore();
    await new SessionRecorder({ store, actor, ...address }).startRun();
    expect(await restoreMessages(store, address)).toEqual([]);
    expect(await restoreConversation(store, address)).toEqual({
      messages: [],
      pendingToolCalls: [],
    });
  });

  it("refuses a run or session the store does not hold, not an empty conversation to start over", async () => {
    const store = new MemoryEventStore();
    await new SessionRecorder({ store, actor, ...address }).startRun();
    for (const missing of [
      { sessionId: "chat", runId: "nope" },
      { sessionId: "chta", runId: "turn-1" },
    ]) {
      for (const restore of [restoreMessages, restoreConversation]) {
        const error = await restore(store, missing).catch((caught: unknown) => caught);
        expect(LedgerError.isInstance(error, "not-found"), String(error)).toBe(true);
        expect((error as LedgerError).message).toBe(
          `run ${missing.runId} not found in session ${missing.sessionId}`,
        );
      }
    }
  });

  it("after a crash, never gives a call in flight the result of an earlier call with the same toolCallId", async () => {
    const store = await crashedChat("reused-ids");
    try {
      const messages = await restoreMessages(store, CRASHED_CHAT);
      // The second step's call_0 (send) was in flight: no result. The first step's call_0
      // (lookup) keeps its own, in the prompt of the second step.
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: "look up a, then tell bob" }] },
        {
          role: "assistant",
          content: [
            { type: "tool-call", toolCallId: "call_0", toolName: "lookup", input: { key: "a" } },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "call_0",
              toolName: "lookup",
              output: { type: "text", value: "A" },
            },
          ],
        },
        {
          role: "assistant",
          content: [
            { type: "tool-call", toolCallId: "call_0", toolName: "send", input: { to: "bob" } },
          ],
        },
      ]);
    } finally {
      await store.close();
    }
  });

  it("restoreConversation names the calls left without a result, so the chat can go on once each has one", async () => {
    const store = await crashedChat("pending");
    try {
      const { messages, pendingToolCalls } = await restoreConversation(store, CRASHED_CHAT);
      // send was running at the SIGKILL: it may have had its effect.
      expect(pendingToolCalls).toEqual([
        { toolCallId: "call_0", toolName: "send", input: { to: "bob" }, requested: true },
      ]);

      // As the README says: a tool result for each pending call, then the SDK takes them.
      const decided = pendingToolCalls.map((call) => ({
        type: "tool-result" as const,
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: "error-text" as const, value: "interrupted by a crash, not retried" },
      }));
      const next = scriptedModel([textResult("I could not reach bob")]);
      const followUp = await generateText({
        model: next.model,
        messages: [...messages, { role: "tool", content: decided }],
      });
      expect(followUp.text).toBe("I could not reach bob");
      expect(JSON.stringify(next.model.doGenerateCalls[0]?.prompt)).toContain(
        "interrupted by a crash, not retried",
      );
      // Without them the SDK refuses the messages.
      await expect(generateText({ model: next.model, messages })).rejects.toMatchObject({
        name: "AI_MissingToolResultsError",
      });
    } finally {
      await store.close();
    }
  });
});
