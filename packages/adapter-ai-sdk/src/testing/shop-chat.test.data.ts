// A shop assistant whose tools give the model something else than their output
// (`toModelOutput`: a line of text, a receipt image), and the SIGKILL scenarios of the
// restoreConversation tests: a crash before the model has seen the results of the last step,
// and a crash after an embedding call made between two steps.
import { type EventStore, type NewEvent, SessionRecorder } from "@agent-ledger/core";
import { compiledBeside, killAtMarker } from "@agent-ledger/core/testing";
import {
  embed,
  generateText,
  type ModelMessage,
  stepCountIs,
  tool,
  wrapEmbeddingModel,
  wrapLanguageModel,
} from "ai";
import { MockEmbeddingModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerEmbeddingMiddleware } from "../embedding-middleware.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashAfterAppend, crashHere } from "./crash-in-child.test.data.js";
import {
  assistant,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** Where the shop chat records. */
export const SHOP_CHAT = { sessionId: "shop", runId: "turn-1" };

/** The first user message of the shop chat. */
export const SHOP_PROMPT: ModelMessage[] = [
  { role: "user", content: "Where is order 42? Send me its receipt and refund the shipping." },
];

/** The bytes of the receipt image the `receipt` tool returns. */
export const RECEIPT_PNG = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 255]);

/**
 * The shop's tools. `lookup` and `receipt` give the model what their `toModelOutput` makes of
 * their output (from the input and the toolCallId too), `refund` fails, `charge` runs
 * `charge` (in a crash child: never returns).
 */
export function shopTools(charge: () => Promise<string>) {
  return {
    lookup: tool({
      inputSchema: z.object({ order: z.number() }),
      execute: async ({ order }) => ({ order, status: "shipped", carrier: "DHL" }),
      toModelOutput: ({ input, output }) => ({
        type: "text" as const,
        value: `order ${input.order}: ${output.status}`,
      }),
    }),
    receipt: tool({
      inputSchema: z.object({ order: z.number() }),
      execute: async ({ order }) => ({ name: `receipt-${order}.png`, png: RECEIPT_PNG }),
      // Bytes as the tool returned them: a base64 string here would be sent as its text's bytes.
      // Async, as the SDK allows.
      toModelOutput: async ({ toolCallId, output }) => ({
        type: "content" as const,
        value: [
          { type: "text" as const, text: `${output.name} (${toolCallId})` },
          {
            type: "image-data" as const,
            data: Buffer.from(output.png).toString("base64"),
            mediaType: "image/png",
          },
        ],
      }),
    }),
    refund: tool({
      inputSchema: z.object({ order: z.number() }),
      execute: async (): Promise<string> => {
        throw new Error("refunds are closed today");
      },
      toModelOutput: () => ({ type: "text" as const, value: "never called for a failure" }),
    }),
    charge: tool({
      inputSchema: z.object({ amount: z.number() }),
      execute: () => charge(),
    }),
  };
}

/** The model of the shop chat: one step of four tool calls, then an answer. */
export function shopModel() {
  return scriptedModel([
    {
      ...toolCallsResult(
        toolCall("c1", "lookup", { order: 42 }),
        toolCall("c2", "receipt", { order: 42 }),
        toolCall("c3", "refund", { order: 42 }),
        toolCall("c4", "charge", { amount: 10 }),
      ),
      content: [
        { type: "text", text: "Let me check." },
        toolCall("c1", "lookup", { order: 42 }),
        toolCall("c2", "receipt", { order: 42 }),
        toolCall("c3", "refund", { order: 42 }),
        toolCall("c4", "charge", { amount: 10 }),
      ],
    },
    textResult("Order 42 has shipped; here is your receipt."),
  ]);
}

/**
 * Runs the shop chat to its end, recording to `store` (`charge`: what the charge tool does):
 * the SDK's result, and the model, whose calls hold the prompts it was sent.
 */
export async function runShopChat(store: EventStore, charge: () => Promise<string>) {
  const recorder = new SessionRecorder({ store, ...SHOP_CHAT, actor: assistant });
  const { model } = shopModel();
  const result = await generateText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    messages: SHOP_PROMPT,
    tools: wrapTools(shopTools(charge), { recorder }),
    stopWhen: stepCountIs(3),
  });
  return { result, model };
}

/**
 * In the crash child: the shop chat, recording to `store`, dies once lookup, receipt and
 * refund have their outcomes in the ledger, while charge is still running: before the model
 * was called again with their results.
 */
export async function crashBeforeResultsAreSeen(store: EventStore): Promise<void> {
  let outcomes = 0;
  const isOutcome = (event: NewEvent) =>
    (event.type === "tool.completed" || event.type === "tool.failed") && ++outcomes === 3;
  await runShopChat(crashAfterAppend(store, isOutcome), () => new Promise<never>(() => {}));
}

/**
 * In the crash child: a chat whose first step looks order 42 up; before the second step's
 * model call the app embeds the result (a memory write) on the same recorder, and dies.
 */
export async function crashAfterEmbedding(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...SHOP_CHAT, actor: assistant });
  const { model } = scriptedModel([
    toolCallsResult(toolCall("c1", "lookup", { order: 42 })),
    textResult("Order 42 has shipped."),
  ]);
  const embedder = wrapEmbeddingModel({
    model: new MockEmbeddingModelV3({
      doEmbed: async ({ values }) => ({ embeddings: values.map(() => [0.1, 0.2]), warnings: [] }),
    }),
    middleware: ledgerEmbeddingMiddleware({ recorder }),
  });
  const { lookup } = shopTools(async () => "charged");
  await generateText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    messages: [{ role: "user", content: "Where is order 42?" }],
    tools: wrapTools({ lookup }, { recorder }),
    stopWhen: stepCountIs(3),
    prepareStep: async ({ stepNumber }) => {
      if (stepNumber === 1) {
        await embed({ model: embedder, value: "order 42: shipped", maxRetries: 0 });
        await crashHere();
      }
      return undefined;
    },
  });
}

/** The scenarios of the shop chat's crash child. */
export type ShopCrash = "before results are seen" | "after an embedding";

// The compiled child, beside this file's compiled copy (tests run after `tsc -b`).
const CHILD = compiledBeside("./shop-chat.test.child.js", import.meta.url);

/** Runs `scenario` in a child process recording into the SQLite file `path`; SIGKILLs it there. */
export async function crashShopChat(scenario: ShopCrash, path: string): Promise<void> {
  await killAtMarker([CHILD, scenario, path], "CRASH_POINT");
}
