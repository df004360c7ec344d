// A chat as `useChat` drives one: the client holds UI messages and posts them all with each
// request; the server converts them (`convertToModelMessages`), streams one turn on a run of
// its own named after the conversation (`chatTurnId`, README "A chat app") and answers with the
// UI message stream (`toUIMessageStream`, what `toUIMessageStreamResponse` sends), which the
// client reads into its assistant message (`readUIMessageStream`). The model asks for a refund
// that needs the user's approval (`refundTools`); the user approves it on the assistant
// message, and the client posts the conversation again (`sendAutomaticallyWhen:
// lastAssistantMessageIsCompleteWithApprovalResponses`): that request runs the refund.
import { type EventStore, LedgerError } from "@agent-ledger/core";
import {
  convertToModelMessages,
  readUIMessageStream,
  stepCountIs,
  streamText,
  type UIMessage,
  type UIMessageChunk,
  wrapLanguageModel,
} from "ai";
import { chatTurnId } from "../chat-turn-id.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { type RefundWorld, refundModel, refundTools } from "./approving-chat.test.data.js";
import { turnRecorder } from "./chat-server.test.data.js";

/** The chat's id: its session. */
export const UI_CHAT = "ui-chat";

/** The user's message. */
export const REFUND_42: UIMessage = {
  id: "msg-user-1",
  role: "user",
  parts: [{ type: "text", text: "refund order 42" }],
};

/** How the server answers: `system`, its system prompt (none by default). */
export interface ServerSetup {
  system?: string;
}

/** The server: one request's turn, answered as a UI message stream; the run it recorded on. */
async function serve(
  store: EventStore,
  world: RefundWorld,
  messages: UIMessage[],
  setup: ServerSetup,
) {
  const modelMessages = await convertToModelMessages(messages);
  const recorder = await turnRecorder(store, UI_CHAT, chatTurnId(modelMessages));
  const model = refundModel(world);
  const errors: unknown[] = [];
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    ...(setup.system !== undefined ? { system: setup.system } : {}),
    messages: modelMessages,
    tools: wrapTools(refundTools(world), { recorder }),
    stopWhen: stepCountIs(3),
    onError: ({ error }) => void errors.push(error),
    onFinish: async ({ text, finishReason }) => {
      if (recorder.status === "running" && finishReason !== "error")
        await recorder.completeRun({ text }).catch((error: unknown) => errors.push(error));
    },
  });
  // Read to its end (and onFinish called) even if the client goes away mid-answer.
  result.consumeStream();
  // The SDK sends the client "An error occurred." for any error unless told what to say: a
  // call the ledger refuses until a person decides is said so, with its code.
  const stream = result.toUIMessageStream({
    originalMessages: messages,
    onError: (error) =>
      LedgerError.isInstance(error) ? `${error.code}: ${error.message}` : "An error occurred.",
  });
  return { stream, errors, recorder };
}

/**
 * One request, as the client sends and reads it: the conversation the client then holds (the
 * assistant message the stream built, in place of the last one if the turn went on from it),
 * the chunks it got, and what the server's onError heard.
 */
export async function uiChatRequest(
  store: EventStore,
  world: RefundWorld,
  messages: UIMessage[],
  setup: ServerSetup = {},
) {
  const { stream, errors, recorder } = await serve(store, world, messages, setup);
  const [reading, kept] = stream.tee();
  const chunks: UIMessageChunk[] = [];
  const collected = (async () => {
    for await (const chunk of kept) chunks.push(chunk);
  })();
  const last = messages.at(-1);
  const continued = last?.role === "assistant" ? last : undefined;
  let answer: UIMessage | undefined;
  for await (const message of readUIMessageStream({
    stream: reading,
    ...(continued ? { message: continued } : {}),
  }))
    answer = message;
  await collected;
  const before = continued ? messages.slice(0, -1) : messages;
  return { messages: answer ? [...before, answer] : before, chunks, errors, recorder };
}

/**
 * One request whose client goes away (the tab closed) once it has read a chunk of type
 * `leavesAt`: it cancels the response stream. The chunks it read, and the turn's recorder.
 */
export async function uiChatRequestLeft(
  store: EventStore,
  world: RefundWorld,
  messages: UIMessage[],
  leavesAt: UIMessageChunk["type"],
) {
  const { stream, recorder } = await serve(store, world, messages, {});
  const reader = stream.getReader();
  const chunks: UIMessageChunk[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the answer ended before a ${leavesAt} chunk`);
    chunks.push(value);
    if (value.type === leavesAt) break;
  }
  await reader.cancel();
  return { chunks, recorder };
}

/** The conversation with every approval the last assistant message asks for answered. */
export function approvedAll(messages: UIMessage[]): UIMessage[] {
  const last = messages.at(-1);
  if (last?.role !== "assistant") throw new Error("no assistant message to approve on");
  const parts = last.parts.map((part) =>
    "state" in part && part.state === "approval-requested"
      ? {
          ...part,
          state: "approval-responded" as const,
          approval: { ...part.approval, approved: true },
        }
      : part,
  );
  if (parts.every((part, index) => part === last.parts[index]))
    throw new Error("no approval asked");
  return [...messages.slice(0, -1), { ...last, parts } as UIMessage];
}

/**
 * In the crash child: the user asks, approves the refund, and the server dies inside it (the
 * SDK runs the approved call before the request's first model call).
 */
export async function crashInsideUiApprovedRefund(store: EventStore): Promise<void> {
  const world: RefundWorld = { refunds: 0, modelCalls: 0 };
  const first = await uiChatRequest(store, world, [REFUND_42]);
  world.crash = true;
  await uiChatRequest(store, world, approvedAll(first.messages));
  throw new Error("the approving request did not stop inside the refund");
}
