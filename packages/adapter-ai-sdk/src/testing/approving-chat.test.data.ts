// A chat whose `refund` tool needs the user's approval (needsApproval: true): turn 1 streams up
// to the approval request; the user approves, and turn 2 (a run of its own, as the README's "A
// chat app" names it) starts by running the approved refund, before its first model call. (Or
// the process dies at the approval request, and the chat goes on from the ledger alone.)
import type { EventStore } from "@agent-ledger/core";
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import { type ModelMessage, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { turnRecorder } from "./chat-server.test.data.js";
import { crashAfterAppend, crashHere, report } from "./crash-in-child.test.data.js";
import {
  partsStream,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** The chat's session. */
export const APPROVING_CHAT = "chat-refund";

/** The chat's first message. */
export const ASK: ModelMessage = { role: "user", content: "refund order 42" };

/** What the chat's tools did; in a crash child, `crash` stops inside the refund. */
export interface RefundWorld {
  refunds: number;
  modelCalls: number;
  crash?: boolean;
  /** The prompt of each model call, when kept. */
  prompts?: LanguageModelV3Prompt[];
}

/** The chat's tools, unwrapped. */
export function refundTools(world: RefundWorld) {
  const refund = tool({
    inputSchema: z.object({ order: z.string() }),
    needsApproval: true,
    execute: async ({ order }) => {
      world.refunds++;
      if (world.crash) {
        report.effect(`refund:${order}`);
        await crashHere();
      }
      return "refunded";
    },
  });
  return { refund };
}

/** The chat's model: asks for the refund of order 42, and once the tool answered, says it is done. */
export function refundModel(world: RefundWorld) {
  return new MockLanguageModelV3({
    doStream: async (options) => {
      world.modelCalls++;
      world.prompts?.push(options.prompt);
      const answer =
        options.prompt.at(-1)?.role === "tool"
          ? textResult("order 42 is refunded")
          : toolCallsResult(toolCall("call-refund", "refund", { order: "42" }));
      return { stream: partsStream(streamPartsOf(answer)) };
    },
  });
}

/** One turn: its text (`result.text`, or what it rejected with), the errors onError got. */
export async function refundTurn(
  store: EventStore,
  world: RefundWorld,
  turnId: string,
  messages: ModelMessage[],
) {
  const recorder = await turnRecorder(store, APPROVING_CHAT, turnId);
  const model = refundModel(world);
  const errors: unknown[] = [];
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    messages,
    tools: wrapTools(refundTools(world), { recorder }),
    stopWhen: stepCountIs(3),
    onError: ({ error }) => {
      errors.push(error);
    },
  });
  const text = await result.text.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  const messagesAdded = "value" in text ? (await result.response).messages : [];
  return { text, errors, messages: messagesAdded, recorder };
}

/** Turn 2's messages: turn 1's, and the user's approval of the refund it asked for. */
export function approved(turn1: ModelMessage[]): ModelMessage[] {
  return answered(turn1, true);
}

/** Turn 2's messages: turn 1's, and the user's denial (no reason given) of the refund. */
export function denied(turn1: ModelMessage[]): ModelMessage[] {
  return answered(turn1, false);
}

/** Turn 2's messages: turn 1's, and the user's answer to the refund's approval request. */
function answered(turn1: ModelMessage[], approved: boolean): ModelMessage[] {
  const request = turn1
    .flatMap((message) =>
      message.role === "assistant" && Array.isArray(message.content) ? message.content : [],
    )
    .find((part) => part.type === "tool-approval-request");
  if (request?.type !== "tool-approval-request") throw new Error("no approval request");
  return [
    ASK,
    ...turn1,
    {
      role: "tool",
      content: [{ type: "tool-approval-response", approvalId: request.approvalId, approved }],
    },
  ];
}

/** In the crash child: turn 1 asks for approval, turn 2 dies inside the approved refund. */
export async function crashInsideApprovedRefund(store: EventStore): Promise<void> {
  const world: RefundWorld = { refunds: 0, modelCalls: 0 };
  const first = await refundTurn(store, world, "1", [ASK]);
  await first.recorder.completeRun({ approval: "asked" });
  world.crash = true;
  await refundTurn(store, world, "2", approved(first.messages));
}

/**
 * In the crash child: turn 1 asks for the refund's approval; the user denies it, and turn 2 dies
 * right after the append that holds the denial's `tool.requested` (and, in the same append, its
 * `attempt.abandoned`), before its model call.
 */
export async function crashAfterRefundDenial(store: EventStore): Promise<void> {
  const world: RefundWorld = { refunds: 0, modelCalls: 0 };
  const first = await refundTurn(store, world, "1", [ASK]);
  await first.recorder.completeRun({ approval: "asked" });
  const crashing = crashAfterAppend(store, (event) => event.type === "tool.requested");
  await refundTurn(crashing, world, "2", denied(first.messages));
  throw new Error("turn 2 did not stop at the denial's request");
}

/**
 * In the crash child: turn 1 streams up to the refund's approval request, and the process dies
 * there, before the turn's run is closed, keeping none of the chat's messages.
 */
export async function crashAtRefundApproval(store: EventStore): Promise<void> {
  const world: RefundWorld = { refunds: 0, modelCalls: 0 };
  const first = await refundTurn(store, world, "1", [ASK]);
  if (!first.messages.some((message) => message.role === "assistant"))
    throw new Error("turn 1 did not stop at the approval request");
  await crashHere();
}
