import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";
import { watchToolCompletions } from "./tool-completions.js";

export const SESSION = "effect-session";
export const RUN = "effect-run";

// One turn asks for `lookup` (declared idempotent, it calls `audit` itself) and `send` (not).
function script(messages: BaseMessage[]) {
  if (messages.some((message) => ToolMessage.isInstance(message))) return new AIMessage("done");
  return new AIMessage({
    content: "",
    tool_calls: [
      { id: "call-lookup", name: "lookup", args: {} },
      { id: "call-send", name: "send", args: {} },
    ],
  });
}

/**
 * One process's agent and tools. `dieInSend`: the process dies inside send once it has sent,
 * after what that promise waits for.
 */
export function world(store: EventStore, dieInSend?: () => Promise<void>) {
  const runs = { lookup: 0, send: 0, audit: 0 };
  const audit = tool(
    async () => {
      runs.audit++;
      return "audited";
    },
    { name: "audit", description: "write", schema: z.object({}) },
  );
  const lookup = tool(
    async (_input, config) => {
      runs.lookup++;
      await audit.invoke({}, config);
      return "value";
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({}),
      metadata: { idempotent: true, effect: "read" },
    },
  );
  const send = tool(
    async () => {
      runs.send++;
      if (dieInSend) {
        noteEffect("send");
        await dieInSend();
        return crashHere();
      }
      return "sent";
    },
    { name: "send", description: "write", schema: z.object({}) },
  );
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  // Callback only: no ledgerMiddleware, the effect comes from handleToolStart's metadata.
  const agent = createAgent({
    model: new ScriptedChatModel(script),
    tools: [lookup, send, audit],
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  const config = threadConfig(handler);
  return {
    runs,
    invoke: (input: Parameters<typeof agent.invoke>[0]) => agent.invoke(input, config),
  };
}

export const toolEffectCrashes = {
  /** The process dies inside send, once lookup (and the audit it made) is recorded. */
  "tool-effect:crash-in-send": async (store) => {
    const watched = watchToolCompletions(store);
    const first = world(watched.store, () => watched.completed("lookup"));
    await first.invoke({ messages: [{ role: "user", content: "go" }] });
  },
} satisfies Record<string, CrashScenario>;
