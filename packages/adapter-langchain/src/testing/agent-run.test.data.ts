import { MemoryEventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

// Core's projections read what this adapter records: messages as `{ type, data }` and tool
// results as ToolMessages.
/** A createAgent run (session "s") that looks up x with a tool, then answers, in a memory store. */
export async function recordAgentRun() {
  const store = new MemoryEventStore();
  const lookup = tool(async ({ key }: { key: string }) => `value of ${key}`, {
    name: "lookup",
    description: "read",
    schema: z.object({ key: z.string() }),
  });
  const model = new ScriptedChatModel((messages: BaseMessage[]) =>
    messages.some((message) => ToolMessage.isInstance(message))
      ? new AIMessage("x is 42")
      : new AIMessage({
          content: "",
          tool_calls: [{ id: "call-lookup", name: "lookup", args: { key: "x" } }],
        }),
  );
  const handler = new LedgerCallbackHandler({ store, sessionId: "s", runId: "r" });
  const agent = createAgent({
    model,
    tools: [lookup],
    middleware: [ledgerMiddleware({ handler })],
    systemPrompt: "You are terse.",
  });
  await agent.invoke(
    { messages: [{ role: "user", content: "what is x?" }] },
    { callbacks: [handler] },
  );
  return store;
}
