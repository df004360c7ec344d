// A shop's chat whose `refund` tool needs the user's approval above an amount (a needsApproval
// function), beside a `lookup` that needs none: each turn a generateText on a run of its own,
// recorded into a SQLite file. (Or, in a crash child, turn 2 runs the refund approved on turn 1's
// conversation restored from the ledger, and the process dies inside it.)
import { type EventStore, readWholeRun, SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import type {
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
} from "@ai-sdk/provider";
import { generateText, type ModelMessage, stepCountIs, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { restoreConversation } from "../restore-messages.js";
import { wrapTools } from "../wrap-tools.js";
import { crashableModel, crashHere, report } from "./crash-in-child.test.data.js";
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
  /** In a crash child: the order whose refund reports its effect, then stops for the SIGKILL. */
  crashInside?: string;
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
        if (shop.crashInside === order) {
          report.effect(`refund:${order}`);
          await crashHere();
        }
        return `refunded ${order} (${reason})`;
      },
    }),
    lookup: tool({
      inputSchema: z.object({ order: z.string() }),
      execute: async ({ order }) => `order ${order}: shipped`,
    }),
  };
}

/** What the shop's model asks for: refund 42 (it needs approval), refund 7 and a lookup of 42. */
const SHOP_CALLS = [
  toolCall("call_0", "refund", { order: "42", amount: 50 }),
  toolCall("call_1", "refund", { order: "7", amount: 5 }),
  toolCall("call_2", "lookup", { order: "42" }),
];

/**
 * Refund 42 beside 12 lookups of long order numbers: the completion's content is over 4096
 * bytes, so the ledger keeps it in a blob (a `{"$ledger":"json"}` marker in the event).
 */
export const CALLS_IN_A_BLOB = [
  toolCall("call_0", "refund", { order: "42", amount: 50 }),
  ...Array.from({ length: 12 }, (_, index) =>
    toolCall(`call_${index + 1}`, "lookup", { order: `${index}`.padStart(300, "0") }),
  ),
];

/** The model: asks for `calls`, then answers once it has the tools' results. */
export function shopModel(shop: Shop, calls: LanguageModelV3Content[] = SHOP_CALLS) {
  return crashableModel((options) => {
    shop.prompts.push(options.prompt);
    return options.prompt.at(-1)?.role === "tool" ? textResult("done") : toolCallsResult(...calls);
  });
}

/** One turn of the chat, on its own run of `store`, with generateText. */
async function turnIn(
  store: EventStore,
  shop: Shop,
  runId: string,
  messages: ModelMessage[],
  calls: LanguageModelV3Content[] = SHOP_CALLS,
) {
  const recorder = new SessionRecorder({ store, sessionId: SESSION, runId, actor });
  const result = await generateText({
    model: wrapLanguageModel({
      model: shopModel(shop, calls),
      middleware: ledgerMiddleware({ recorder }),
    }),
    messages,
    tools: wrapTools(shopTools(shop), { recorder }),
    stopWhen: stepCountIs(3),
  });
  return { result, events: await readWholeRun(store, { sessionId: SESSION, runId }) };
}

/** One turn of the chat, on its own run, with generateText, recorded into the file `path`. */
export async function turn(path: string, shop: Shop, runId: string, messages: ModelMessage[]) {
  const store = new SqliteEventStore({ path });
  await store.init();
  try {
    return await turnIn(store, shop, runId, messages);
  } finally {
    await store.close();
  }
}

/** One turn of the refund shop on `store`, its model answering each prompt with `answer`. */
export async function shopTurn(
  store: EventStore,
  shop: Shop,
  runId: string,
  messages: ModelMessage[],
  answer: (prompt: LanguageModelV3Prompt) => LanguageModelV3GenerateResult,
) {
  const recorder = new SessionRecorder({ store, sessionId: SESSION, runId, actor });
  return await generateText({
    model: wrapLanguageModel({
      model: crashableModel((options) => answer(options.prompt)),
      middleware: ledgerMiddleware({ recorder }),
    }),
    messages,
    tools: wrapTools(shopTools(shop), { recorder }),
    stopWhen: stepCountIs(3),
    maxRetries: 0,
  });
}

/** Refund 9, asked in a later turn with the id refund 42 had: it needs approval too. */
export const REFUND_9 = [toolCall("call_0", "refund", { order: "9", amount: 50 })];

/**
 * In the crash child: the chat keeps no messages, and restores turn `asked`'s from the ledger;
 * the person approves its refund of `order`, and turn `next` dies inside it, as the SDK runs it
 * before the turn's first model call.
 */
async function approveAndCrashInside(
  store: EventStore,
  shop: Shop,
  turns: { asked: string; next: string },
  order: string,
): Promise<never> {
  const address = { sessionId: SESSION, runId: turns.asked };
  const restored = await restoreConversation(store, { ...address, tools: shopTools(shop) });
  const approvalId = restored.pendingToolCalls[0]?.approvalId;
  if (approvalId === undefined) throw new Error(`${turns.asked} did not stop at the approval`);
  shop.crashInside = order;
  await turnIn(store, shop, turns.next, [
    ...restored.messages,
    { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] },
  ]);
  throw new Error(`${turns.next} did not stop inside the approved refund`);
}

/**
 * In the crash child: turn 1 (its model asking for `calls`) stops at refund 42's approval; the
 * person approves, and turn 2 dies inside refund 42.
 */
export async function crashInsideRestoredApproval(
  store: EventStore,
  calls: LanguageModelV3Content[] = SHOP_CALLS,
): Promise<void> {
  const shop: Shop = { refunds: [], prompts: [] };
  await turnIn(store, shop, "turn-1", [ASK], calls);
  await approveAndCrashInside(store, shop, { asked: "turn-1", next: "turn-2" }, "42");
}

/**
 * In the crash child: turn 1 stops at refund 42's approval and the app drops that chat; turn 2
 * (a new message) stops at refund 9's, its model reusing the id `call_0`; the person approves
 * that one, and turn 3 dies inside refund 9.
 */
export async function crashInsideLaterApprovedRefund(store: EventStore): Promise<void> {
  const shop: Shop = { refunds: [], prompts: [] };
  await turnIn(store, shop, "turn-1", [ASK]);
  await turnIn(store, shop, "turn-2", [{ role: "user", content: "refund order 9" }], REFUND_9);
  await approveAndCrashInside(store, shop, { asked: "turn-2", next: "turn-3" }, "9");
}

/** Refund 42 and refund 9, both over the limit: each waits for its own approval. */
export const TWO_REFUNDS = [
  toolCall("call_0", "refund", { order: "42", amount: 50 }),
  toolCall("call_1", "refund", { order: "9", amount: 60 }),
];

/**
 * In the crash child: turn 1 asks for refunds 42 and 9 and stops at both approvals; the person
 * answers both in one message (42 approved, 9 denied "too late"), and turn 2 dies inside refund
 * 42, which the SDK runs before the turn's first model call.
 */
export async function crashInsideApprovedBesideDenied(store: EventStore): Promise<void> {
  const shop: Shop = { refunds: [], prompts: [] };
  await turnIn(store, shop, "turn-1", [ASK], TWO_REFUNDS);
  const address = { sessionId: SESSION, runId: "turn-1" };
  const restored = await restoreConversation(store, { ...address, tools: shopTools(shop) });
  const [approve, deny] = restored.pendingToolCalls.map((call) => call.approvalId);
  if (approve === undefined || deny === undefined) throw new Error("turn-1 asked no approvals");
  shop.crashInside = "42";
  await turnIn(store, shop, "turn-2", [
    ...restored.messages,
    {
      role: "tool",
      content: [
        { type: "tool-approval-response", approvalId: approve, approved: true },
        { type: "tool-approval-response", approvalId: deny, approved: false, reason: "too late" },
      ],
    },
  ]);
  throw new Error("turn-2 did not stop inside the approved refund");
}

/** The tool results the model was given in `prompt`, by toolCallId. */
export function toolResultsOf(prompt: LanguageModelV3Prompt | undefined) {
  return Object.fromEntries(
    (prompt ?? [])
      .flatMap((message) => (message.role === "tool" ? message.content : []))
      .flatMap((part) => (part.type === "tool-result" ? [[part.toolCallId, part.output]] : [])),
  );
}
