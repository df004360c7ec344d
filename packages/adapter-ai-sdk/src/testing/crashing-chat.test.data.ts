// A two-step chat whose second tool call never returns: the SIGKILL tests of restoreMessages.
// The provider numbers tool calls per response (call_0 on both steps), as some
// OpenAI-compatible servers do.
import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import { generateText, stepCountIs, tool, wrapLanguageModel } from "ai";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { wrapTools } from "../wrap-tools.js";
import { crashHere, crashInChild } from "./crash-in-child.test.data.js";
import {
  assistant,
  scriptedModel,
  textResult,
  toolCall,
  toolCallsResult,
} from "./scripted-model.test.data.js";

/** Where the crashing chat records. */
export const CRASHED_CHAT = { sessionId: "chat", runId: "turn-1" };

/** In the crash child: the chat, recording to `store`, dies inside its second tool call. */
export async function crashingChat(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...CRASHED_CHAT, actor: assistant });
  const { model } = scriptedModel([
    toolCallsResult(toolCall("call_0", "lookup", { key: "a" })),
    toolCallsResult(toolCall("call_0", "send", { to: "bob" })),
    textResult("done"),
  ]);
  const tools = wrapTools(
    {
      lookup: tool({
        inputSchema: z.object({ key: z.string() }),
        execute: async ({ key }) => key.toUpperCase(),
      }),
      send: tool({
        inputSchema: z.object({ to: z.string() }),
        execute: async (): Promise<string> => crashHere(),
      }),
    },
    { recorder },
  );
  await generateText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    prompt: "look up a, then tell bob",
    tools,
    stopWhen: stepCountIs(5),
  });
}

/**
 * Runs the crashing chat in a child process recording into the SQLite file `path`, and kills
 * it with SIGKILL while its second tool call (`send`, toolCallId `call_0` again) is in flight.
 */
export async function crashChatInsideTool(path: string): Promise<void> {
  await crashInChild("chat inside send", path);
}
