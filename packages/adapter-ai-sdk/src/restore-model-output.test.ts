import { join } from "node:path";
import { LedgerError, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from "ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreConversation, restoreMessages } from "./restore-messages.js";
import {
  assistant,
  providerSearchModel,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./testing/scripted-model.test.data.js";
import {
  crashShopChat,
  RECEIPT_PNG,
  runShopChat,
  SHOP_CHAT,
  SHOP_PROMPT,
  shopTools,
} from "./testing/shop-chat.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const scratch = scratchDirectory("ai-sdk-restore-output-", { beforeAll, afterAll });
const tools = shopTools(async () => "charged");
const plain = (value: unknown) => JSON.parse(JSON.stringify(value));

async function openLedger(name: string) {
  const store = new SqliteEventStore({ path: join(scratch, `${name}.db`) });
  await store.init();
  return store;
}

/** The ledger of the shop chat SIGKILLed while charge runs, lookup, receipt and refund ended. */
async function crashedShopChat(name: string) {
  await crashShopChat("before results are seen", join(scratch, `${name}.db`));
  return openLedger(name);
}

/**
 * The shop chat run to its end (charge returns) on a new ledger: the SDK's result, and the
 * prompt of its second model call, what the model was sent with the results of the first.
 */
async function liveShopChat(name: string) {
  const store = await openLedger(name);
  try {
    const { result, model } = await runShopChat(store, async () => "charged");
    return { store, result, secondPrompt: model.doGenerateCalls[1]?.prompt };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** Continues restored messages with the real SDK, charge's result given; the prompt it sent. */
async function continued(messages: ModelMessage[], toolCallId: string) {
  const next = scriptedModel([textResult("Order 42 has shipped; here is your receipt.")]);
  await generateText({
    model: next.model,
    tools,
    messages: [
      ...messages,
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId,
            toolName: "charge",
            output: { type: "text", value: "charged" },
          },
        ],
      },
    ],
  });
  return next.model.doGenerateCalls[0]?.prompt;
}

describe("restoreConversation with tools", () => {
  it("after a crash before the model saw the last step's results, gives them as the tools' toModelOutput makes them", async () => {
    const live = await liveShopChat("live-crashed");
    await live.store.close();
    const store = await crashedShopChat("crashed");
    try {
      const { messages, pendingToolCalls } = await restoreConversation(store, {
        ...SHOP_CHAT,
        tools,
      });
      expect(pendingToolCalls).toEqual([
        { toolCallId: "c4", toolName: "charge", input: { amount: 10 }, requested: true },
      ]);
      // What toModelOutput made of the recorded outputs: from the input and the toolCallId,
      // the receipt's bytes as the tool returned them; a failure stays the error's text.
      expect(messages.at(-1)).toEqual({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "lookup",
            output: { type: "text", value: "order 42: shipped" },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "receipt",
            output: {
              type: "content",
              value: [
                { type: "text", text: "receipt-42.png (c2)" },
                {
                  type: "image-data",
                  data: Buffer.from(RECEIPT_PNG).toString("base64"),
                  mediaType: "image/png",
                },
              ],
            },
          },
          {
            type: "tool-result",
            toolCallId: "c3",
            toolName: "refund",
            output: { type: "error-text", value: "refunds are closed today" },
          },
        ],
      });
      // Continued with charge's result, the model is sent what it was sent when nothing crashed.
      expect(await continued(messages, "c4")).toEqual(live.secondPrompt);
    } finally {
      await store.close();
    }
  });

  it("without tools, restores the recorded outputs as before (JSON, bytes as base64)", async () => {
    const store = await crashedShopChat("no-tools");
    try {
      const messages = await restoreMessages(store, SHOP_CHAT);
      expect(messages.at(-1)).toEqual({
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "lookup",
            output: { type: "json", value: { order: 42, status: "shipped", carrier: "DHL" } },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "receipt",
            output: {
              type: "json",
              value: { name: "receipt-42.png", png: Buffer.from(RECEIPT_PNG).toString("base64") },
            },
          },
          {
            type: "tool-result",
            toolCallId: "c3",
            toolName: "refund",
            output: { type: "error-text", value: "refunds are closed today" },
          },
        ],
      });
    } finally {
      await store.close();
    }
  });

  it("takes the results of steps the model saw from the recorded prompt, with or without tools", async () => {
    const { store, result } = await liveShopChat("live-whole");
    try {
      // The last request's prompt holds the first step's results as toModelOutput made them;
      // tools change nothing there (toModelOutput is not applied twice).
      const expected = [
        { role: "user", content: [{ type: "text", text: SHOP_PROMPT[0]?.content }] },
        ...plain(result.response.messages),
      ];
      expect(await restoreMessages(store, { ...SHOP_CHAT, tools })).toEqual(expected);
      expect(await restoreMessages(store, SHOP_CHAT)).toEqual(expected);
      expect(JSON.stringify(expected)).toContain('"value":"order 42: shipped"');
    } finally {
      await store.close();
    }
  });

  it("gives a provider-executed tool's result as its toModelOutput makes it, as the SDK's response messages do", async () => {
    const store = await openLedger("provider-executed");
    const recorder = new SessionRecorder({ store, ...SHOP_CHAT, actor: assistant });
    const model = providerSearchModel("order 42", "Order 42 shipped.");
    const searchTools = {
      web_search: tool({
        inputSchema: z.object({ query: z.string() }),
        toModelOutput: ({ toolCallId, input, output }) => ({
          type: "text" as const,
          value: `${toolCallId}: ${(output as { hits: number }).hits} hits for ${input.query}`,
        }),
      }),
    };
    try {
      const result = await generateText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        tools: searchTools,
        prompt: "where is order 42?",
      });
      const messages = await restoreMessages(store, { ...SHOP_CHAT, tools: searchTools });
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: "where is order 42?" }] },
        ...plain(result.response.messages),
      ]);
      expect(JSON.stringify(messages)).toContain("ws-1: 3 hits for order 42");
    } finally {
      await store.close();
    }
  });

  it("refuses tools that are not an object of tools, with invalid-argument", async () => {
    const error = await restoreConversation(new MemoryEventStore(), {
      ...SHOP_CHAT,
      tools: [tool({ inputSchema: z.object({}) })] as never,
    }).catch((thrown: unknown) => thrown);
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect(String((error as Error).message)).toContain("$.tools");
  });
});

describe("restoreConversation with tools, a run that stopped after its tool calls", () => {
  it("gives toModelOutput the input as the tool's schema parsed it, as the SDK's response messages have it", async () => {
    const store = await openLedger("stopped");
    try {
      const recorder = new SessionRecorder({ store, ...SHOP_CHAT, actor: assistant });
      const quote = {
        quote: tool({
          inputSchema: z.object({ order: z.number(), currency: z.string().default("EUR") }),
          execute: async ({ order }) => ({ order, total: 12.5 }),
          toModelOutput: ({ input, output }) => ({
            type: "text" as const,
            value: `order ${input.order}: ${output.total} ${input.currency}`,
          }),
        }),
      };
      const result = await generateText({
        model: wrapLanguageModel({
          model: scriptedModel([toolCallsResult(toolCall("q1", "quote", { order: 42 }))]).model,
          middleware: ledgerMiddleware({ recorder }),
        }),
        tools: wrapTools(quote, { recorder }),
        prompt: "How much is order 42?",
        stopWhen: stepCountIs(1),
      });
      const messages = await restoreMessages(store, { ...SHOP_CHAT, tools: quote });
      expect(messages.at(-1)).toEqual(plain(result.response.messages.at(-1)));
      expect(messages.at(-1)).toMatchObject({
        content: [{ output: { type: "text", value: "order 42: 12.5 EUR" } }],
      });
    } finally {
      await store.close();
    }
  });
});
