import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig, toolGraph } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";
import { watchToolCompletions } from "./tool-completions.js";

export const SESSION = "restore-threads-session";
export const RUN = "restore-threads-run";
/** Two LangGraph threads on one handler, whose models give the same tool call ids. */
export const FIRST = "thread-a";
export const SECOND = "thread-b";

export function ask(threadId: string) {
  return { messages: [new HumanMessage(threadId)] };
}

/**
 * One process's plain graph (LangGraph's ToolNode, stopping on errors), recorded by the
 * callback alone: each thread's model asks for `send` (not idempotent) and `lookup`
 * (idempotent) for its user, as `call_1` and `call_2` in every thread, then answers with the
 * results. `crash`: the second thread's lookup never returns, and the process dies as the first
 * thread's model is called for its answer. `note` hears of each send (`send:<to>`).
 */
export function shopGraph(
  store: EventStore,
  options: { crash?: boolean; note?: (effect: string) => void } = {},
) {
  const sent: string[] = [];
  const send = tool(
    async ({ to }: { to: string }) => {
      sent.push(to);
      options.note?.(`send:${to}`);
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const lookup = tool(
    async ({ key }: { key: string }) => {
      if (options.crash && key === SECOND) await new Promise<never>(() => {});
      return `value of ${key}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ key: z.string() }),
      metadata: { idempotent: true, effect: "read" },
    },
  );
  const model = new ScriptedChatModel(async (messages: BaseMessage[]) => {
    const user = String(messages.find((message) => HumanMessage.isInstance(message))?.content);
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length === 0)
      return new AIMessage({
        content: "",
        tool_calls: [
          { id: "call_1", name: "send", args: { to: user } },
          { id: "call_2", name: "lookup", args: { key: user } },
        ],
      });
    if (options.crash && user === FIRST) await crashHere();
    const contents = results.map((message) => String(message.content)).sort();
    return new AIMessage(`${user}: ${contents.join(" | ")}`);
  });
  const graph = toolGraph(model, [send, lookup], new LedgerCheckpointSaver({ store }), {
    handleToolErrors: false,
  });
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  return { sent, graph, handler };
}

export const restoreThreadsCrashes = {
  /**
   * The second thread's send is done and its lookup in flight when the first thread runs its
   * turn: the first thread's tool calls (the same ids) are done, and the process dies as its
   * model is asked for the answer. The run's last completed model call is the first thread's.
   */
  "restore-threads:second-in-flight": async (store) => {
    const watched = watchToolCompletions(store);
    const { graph, handler } = shopGraph(watched.store, { crash: true, note: noteEffect });
    void graph.invoke(ask(SECOND), threadConfig(handler, SECOND));
    await watched.completed("send");
    await graph.invoke(ask(FIRST), threadConfig(handler, FIRST));
  },
} satisfies Record<string, CrashScenario>;
