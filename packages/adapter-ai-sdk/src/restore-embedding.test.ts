import { join } from "node:path";
import { SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { embed, generateText, wrapEmbeddingModel, wrapLanguageModel } from "ai";
import { MockEmbeddingModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerEmbeddingMiddleware } from "./embedding-middleware.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreConversation } from "./restore-messages.js";
import { assistant, scriptedModel, textResult } from "./testing/scripted-model.test.data.js";
import { crashShopChat, SHOP_CHAT, shopTools } from "./testing/shop-chat.test.data.js";

const scratch = scratchDirectory("ai-sdk-restore-embedding-", { beforeAll, afterAll });

async function openLedger(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  return store;
}

const embeddingModel = () =>
  new MockEmbeddingModelV3({
    doEmbed: async ({ values }) => ({ embeddings: values.map(() => [0.1, 0.2]), warnings: [] }),
  });

describe("restoreConversation after an embedding call", () => {
  it("restores the chat when the run's last model call is an embedding (a memory lookup)", async () => {
    const path = join(scratch, "memory-lookup.db");
    const recording = await openLedger(path);
    const recorder = new SessionRecorder({ store: recording, ...SHOP_CHAT, actor: assistant });
    const turn = await generateText({
      model: wrapLanguageModel({
        model: scriptedModel([textResult("Order 42 shipped yesterday.")]).model,
        middleware: ledgerMiddleware({ recorder }),
      }),
      prompt: "Where is order 42?",
    });
    // The next turn starts with a memory lookup for the new message; the app stops there.
    await embed({
      model: wrapEmbeddingModel({
        model: embeddingModel(),
        middleware: ledgerEmbeddingMiddleware({ recorder }),
      }),
      value: "And order 43?",
    });
    await recording.close();

    const store = await openLedger(path);
    try {
      const { messages, pendingToolCalls } = await restoreConversation(store, SHOP_CHAT);
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: "Where is order 42?" }] },
        ...JSON.parse(JSON.stringify(turn.response.messages)),
      ]);
      expect(pendingToolCalls).toEqual([]);
      // The SDK takes them, and the next turn's model call has the chat so far.
      const next = scriptedModel([textResult("Order 43 is packed.")]);
      const followUp = await generateText({
        model: next.model,
        messages: [...messages, { role: "user", content: "And order 43?" }],
      });
      expect(followUp.text).toBe("Order 43 is packed.");
      expect(JSON.stringify(next.model.doGenerateCalls[0]?.prompt)).toContain(
        "Order 42 shipped yesterday.",
      );
    } finally {
      await store.close();
    }
  });

  it("after a SIGKILL that follows an embedding made between two steps, restores the last step and its results", async () => {
    const path = join(scratch, "between-steps.db");
    await crashShopChat("after an embedding", path);
    const store = await openLedger(path);
    try {
      const { messages, pendingToolCalls } = await restoreConversation(store, SHOP_CHAT);
      expect(messages).toEqual([
        { role: "user", content: [{ type: "text", text: "Where is order 42?" }] },
        {
          role: "assistant",
          content: [
            { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { order: 42 } },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "lookup",
              output: { type: "json", value: { order: 42, status: "shipped", carrier: "DHL" } },
            },
          ],
        },
      ]);
      expect(pendingToolCalls).toEqual([]);
      // The chat goes on from there: the model is called with the looked-up order.
      const next = scriptedModel([textResult("Order 42 has shipped.")]);
      const { lookup } = shopTools(async () => "charged");
      const resumed = await generateText({ model: next.model, tools: { lookup }, messages });
      expect(resumed.text).toBe("Order 42 has shipped.");
      expect(JSON.stringify(next.model.doGenerateCalls[0]?.prompt)).toContain('"carrier":"DHL"');
    } finally {
      await store.close();
    }
  });
});
