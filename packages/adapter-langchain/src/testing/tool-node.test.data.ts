import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "tool-node-session";
export const RUN = "tool-node-run";

/**
 * A plain graph with LangGraph's prebuilt ToolNode (what createReactAgent builds), recorded by
 * the callback alone (no middleware exists for it), and a `send` tool (not idempotent).
 * `sent`: the messages already out when this process starts (a crashed one sent them). With
 * `crashInSend`, the process dies inside send, once the message is out.
 */
export function world(store: EventStore, options: { sent?: number; crashInSend?: boolean } = {}) {
  const effects = { sent: options.sent ?? 0, modelAnswers: [] as string[] };
  const send = tool(
    async ({ to }: { to: string }) => {
      effects.sent++;
      if (options.crashInSend) {
        noteEffect("sent");
        return crashHere();
      }
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const graph = (graphOptions: { handleToolErrors?: boolean }) => {
    const model = new ScriptedChatModel((messages: BaseMessage[]) => {
      const result = messages.findLast((message) => ToolMessage.isInstance(message));
      if (!result)
        return new AIMessage({
          content: "",
          tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
        });
      effects.modelAnswers.push(String(result.content));
      return new AIMessage("done");
    });
    return new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state, config: RunnableConfig) => ({
        messages: [await model.invoke(state.messages, config)],
      }))
      .addNode("tools", new ToolNode([send], graphOptions))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (state) =>
        (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END,
      )
      .addEdge("tools", "agent")
      .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
  };
  return { effects, graph };
}

export const toolNodeCrashes = {
  /** The first process: it dies inside `send`, once the message is out. */
  "tool-node:crash-in-send": async (store) => {
    const run = world(store, { crashInSend: true });
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    await run
      .graph({ handleToolErrors: false })
      .invoke({ messages: [new HumanMessage("email bob")] }, threadConfig(handler));
  },
} satisfies Record<string, CrashScenario>;
