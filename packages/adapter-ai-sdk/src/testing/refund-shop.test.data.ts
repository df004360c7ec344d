// A shop's chat whose `refund` tool needs the user's approval above an amount (a needsApproval
// function), beside a `lookup` that needs none: each turn a generateText on a run of its own,
// recorded into a SQLite file.
import { readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashableModel } from "./crash-in-child.test.data.js";
import {
  assistant as actor,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** The chat's session. */
export const SESSION = "chat-refunds";
/** The user's message. */
export const ASK: ModelMessage = {
  role: "user",
  content: "refund orders 42 and 7, and look up 42",
};

/** What the shop's tools did, and the prompts its model was given. */
export interface Shop {
  refunds: string[];
  prompts: LanguageModelV3Prompt[];
}

/**
 * The shop's tools: `refund` needs approval above 10 (a function, asked by the SDK), and its
 * schema fills in a `reason` the model leaves out; `lookup` needs none.
 */
export function shopTools(shop: Shop) {
  return {
    refund: tool({
      inputSchema: z.object({
        order: z.string(),
        amount: z.number(),
        reason: z.string().default("customer asked"),
      }),
      needsApproval: async ({ amount }) => amount > 10,
      execute: async ({ order, reason }) => {
        shop.refunds.push(order);
        return `refunded ${order} (${reason})`;
      },
    }),
    lookup: tool({
      inputSchema: z.object({ order: z.string() }),
      execute: async ({ order }) => `order ${order}: shipped`,
    }),
  };
}

/** The model: asks for the three calls, then answers once it has the tools' results. */
export function shopModel(shop: Shop) {
  return crashableModel((options) => {
    shop.prompts.push(options.prompt);
    return options.prompt.at(-1)?.role === "tool"
      ? textResult("done")
      : toolCallsResult(
          toolCall("call_0", "refund", { order: "42", amount: 50 }),
          toolCall("call_1", "refund", { order: "7", amount: 5 }),
          toolCall("call_2", "lookup", { order: "42" }),
        );
  });
}

/** One turn of the chat, on its own run, with generateText. */
export async function turn(path: string, shop: Shop, runId: string, messages: ModelMessage[]) {
  const store = new SqliteEventStore({ path });
  await store.init();
  try {
    const recorder = new SessionRecorder({ store, sessionId: SESSION, runId, actor });
    const result = await generateText({
      model: wrapLanguageModel({
        model: shopModel(shop),
        middleware: ledgerMiddleware({ recorder }),
      }),
      messages,
      tools: wrapTools(shopTools(shop), { recorder }),
      stopWhen: stepCountIs(3),
    });
    return { result, events: await readWholeRun(store, { sessionId: SESSION, runId }) };
  } finally {
    await store.close();
  }
}

/** The tool results the model was given in `prompt`, by toolCallId. */
export function toolResultsOf(prompt: LanguageModelV3Prompt | undefined) {
  return Object.fromEntries(
    (prompt ?? [])
      .flatMap((message) => (message.role === "tool" ? message.content : []))
      .flatMap((part) => (part.type === "tool-result" ? [[part.toolCallId, part.output]] : [])),
  );
}
