// A chat server as the README's "A chat app" builds one: each request streams one turn of the
// chat, on a run of its own named after the turn, resumed when a process had begun it. Its model
// asks `send` to tell the user's words to someone, then says it did.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import { type ModelMessage, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashHere, report } from "./crash-in-child.test.data.js";
import {
  assistant,
  partsStream,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** The chat's session. */
export const CHAT = "chat-7";

/** The recorder of one turn of a chat (its run `turn-<id>`), resumed if a process began it. */
export async function turnRecorder(store: EventStore, chatId: string, turnId: string) {
  const address = { store, sessionId: chatId, runId: `turn-${turnId}`, actor: assistant };
  const runs = await store.listRuns(chatId);
  return runs.some((run) => run.runId === address.runId)
    ? SessionRecorder.resume(address)
    : new SessionRecorder(address);
}

/** A promise, and what settles it. */
function settlement() {
  let resolve: () => void = () => {};
  let reject: (error: unknown) => void = () => {};
  const promise = new Promise<void>((ok, fail) => {
    resolve = ok;
    reject = fail;
  });
  return { promise, resolve, reject };
}

/** What the server's tools and model did: what `send` sent, and the calls the provider got. */
export interface ChatWorld {
  sent: string[];
  modelCalls: number;
  /**
   * In a crash child: die inside the model call that answers turn `crashIn`'s tool result (and
   * report each effect and provider call to the test before it).
   */
  crashIn?: string;
}

function chatModel(world: ChatWorld, turnId: string) {
  const answer = (options: LanguageModelV3CallOptions) => {
    world.modelCalls++;
    if (world.crashIn !== undefined) report.modelCall();
    const last = options.prompt.at(-1);
    if (last?.role === "tool") {
      if (world.crashIn === turnId) return crashHere();
      return textResult(`told them (turn ${turnId})`);
    }
    const words =
      last?.role === "user"
        ? last.content.map((part) => (part.type === "text" ? part.text : "")).join("")
        : "";
    return toolCallsResult(toolCall(`call-${turnId}`, "send", { words }));
  };
  return new MockLanguageModelV3({
    doStream: async (options) => ({ stream: partsStream(streamPartsOf(await answer(options))) }),
  });
}

/**
 * One request: streams turn `turnId` over the `messages` the client sent, and closes its run.
 * Returns the turn's text and the messages the client adds to the chat.
 */
export async function chatTurn(
  store: EventStore,
  world: ChatWorld,
  turnId: string,
  messages: ModelMessage[],
) {
  const recorder = await turnRecorder(store, CHAT, turnId);
  // The server's response ends before onFinish has closed the run: the test waits for both.
  const closed = settlement();
  const send = tool({
    inputSchema: z.object({ words: z.string() }),
    execute: async ({ words }) => {
      world.sent.push(words);
      if (world.crashIn !== undefined) report.effect(`send:${words}`);
      return "sent";
    },
  });
  const result = streamText({
    model: wrapLanguageModel({
      model: chatModel(world, turnId),
      middleware: ledgerMiddleware({ recorder }),
    }),
    messages,
    tools: wrapTools({ send }, { recorder }),
    stopWhen: stepCountIs(3),
    // A request sent again after its turn was answered finds the run closed: nothing to close.
    onFinish: async ({ text }) => {
      try {
        if (recorder.status === "running") await recorder.completeRun({ text });
        closed.resolve();
      } catch (error) {
        closed.reject(error);
      }
    },
  });
  const text = await result.text;
  const { messages: added } = await result.response;
  await closed.promise;
  return { text, messages: added, status: recorder.status };
}

/** The chat's first message, and the second turn's. */
export const FIRST: ModelMessage = { role: "user", content: "hello Ann" };
export const SECOND: ModelMessage = { role: "user", content: "lunch at noon" };

/** In the crash child: turn 1 is answered, then the process dies answering turn 2's tool result. */
export async function crashInSecondTurn(store: EventStore): Promise<void> {
  const world: ChatWorld = { sent: [], modelCalls: 0, crashIn: "2" };
  const first = await chatTurn(store, world, "1", [FIRST]);
  await chatTurn(store, world, "2", [FIRST, ...first.messages, SECOND]);
}
