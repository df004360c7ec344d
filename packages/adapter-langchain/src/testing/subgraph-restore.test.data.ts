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

export const SESSION = "subgraph-restore-session";
export const RUN = "subgraph-restore-run";
export const THREAD = "thread-1";

/**
 * A plain graph whose ToolNode is inside a subgraph (README: Plain LangGraph graphs, subgraphs):
 * the root graph runs `research`, a compiled graph added as a node, whose `agent` asks for
 * `send` (not idempotent) once and then answers with what it got. `effect` hears each message
 * sent (`sent`) and model call paid (`model`); `crashInSend` kills the process inside send,
 * once the message is out. `modelSaw`: the result the model answered. `plan`: the root graph
 * runs a `plan` node first, whose own model call (recorded in the handler's run, asking for no
 * tool) answers with a plan (`planned`).
 */
export function subgraphWorld(
  store: EventStore,
  options: { effect: (what: string) => void; crashInSend?: boolean; plan?: boolean },
) {
  const modelSaw: string[] = [];
  const send = tool(
    async ({ to }: { to: string }) => {
      options.effect("sent");
      if (options.crashInSend) return crashHere();
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const model = new ScriptedChatModel((messages: BaseMessage[]) => {
    options.effect("model");
    const result = messages.findLast((message) => ToolMessage.isInstance(message));
    if (!result)
      return new AIMessage({
        content: "",
        tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
      });
    modelSaw.push(String(result.content));
    return new AIMessage("done");
  });
  const research = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config: RunnableConfig) => ({
      messages: [await model.invoke(state.messages, config)],
    }))
    .addNode("tools", new ToolNode([send], { handleToolErrors: false }))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) =>
      (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END,
    )
    .addEdge("tools", "agent")
    .compile();
  const planner = new ScriptedChatModel(() => {
    options.effect("planned");
    return new AIMessage("plan: email bob");
  });
  const plan = async (state: typeof MessagesAnnotation.State, config: RunnableConfig) => ({
    messages: [await planner.invoke(state.messages, config)],
  });
  const checkpointer = new LedgerCheckpointSaver({ store });
  const graph = options.plan
    ? new StateGraph(MessagesAnnotation)
        .addNode("plan", plan)
        .addNode("research", research)
        .addEdge(START, "plan")
        .addEdge("plan", "research")
        .addEdge("research", END)
        .compile({ checkpointer })
    : new StateGraph(MessagesAnnotation)
        .addNode("research", research)
        .addEdge(START, "research")
        .addEdge("research", END)
        .compile({ checkpointer });
  return { graph, modelSaw };
}

export const ASK = { messages: [new HumanMessage("email bob")] };

export const subgraphRestoreCrashes = {
  /** The first process: it dies inside the subgraph's `send`, once the message is out. */
  "subgraph-restore:crash-in-send": async (store) => {
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const { graph } = subgraphWorld(store, { effect: noteEffect, crashInSend: true });
    await graph.invoke(ASK, threadConfig(handler, THREAD));
  },
  /** As above, after the root graph's `plan` node made a model call of its own. */
  "subgraph-restore:plan-then-crash-in-send": async (store) => {
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const { graph } = subgraphWorld(store, { effect: noteEffect, crashInSend: true, plan: true });
    await graph.invoke(ASK, threadConfig(handler, THREAD));
  },
} satisfies Record<string, CrashScenario>;
