import type { RunView } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { crashHere } from "./crash-point.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

/** What a run holds: its calls' names in order (model calls as `model`). */
export function callsOf(run: RunView): string[] {
  return run.steps.map((step) =>
    step.kind === "model" ? "model" : String(step.attempts[0]?.name),
  );
}

export const SESSION = "subgraph-session";
export const RUN = "supervisor";
export const THREAD = "t1";

/** How the supervisor runs its research subgraph: added as a node, or invoked from a node's function. */
export type SubgraphMode = "node" | "function";

/** The number N of the last `research N` task in `messages` (0 before the first). */
function taskOf(messages: BaseMessage[]): number {
  for (const message of [...messages].reverse()) {
    const match = /^research (\d+)$/.exec(String(message.content));
    if (match) return Number(match[1]);
  }
  return 0;
}

/**
 * A supervisor graph: its `router` node asks its model, which hands `research 1`, then
 * `research 2` (a loop: the subgraph runs twice in one run), then finishes. The research
 * subgraph (an agent node and LangGraph's ToolNode) looks up (`lookup`, idempotent), then
 * sends an email (`send_email`, not idempotent), then reports. `effect` hears of each email
 * sent and each model call paid. `crashIn`: that call never returns (the test kills the process
 * in it): a tool call (`lookup 2`, `send_email 2`...), or a researcher's model call, paid, named
 * after its task and what it asks for (`researcher 2 asking send_email`, `... asking report`). `subgraphCheckpointer`: the subgraph's own
 * `compile({ checkpointer })` (default: inherited). `confirm`: `send_email` asks a person first
 * (LangGraph's `interrupt()`), and sends on "yes".
 */
export function supervisorGraph(options: {
  mode: SubgraphMode;
  checkpointer: BaseCheckpointSaver;
  effect: (name: string) => void;
  crashIn?: string;
  subgraphCheckpointer?: boolean;
  confirm?: boolean;
}) {
  const { mode, effect, crashIn } = options;
  const hang = async (name: string) => {
    if (crashIn === name) await crashHere();
  };
  const lookup = tool(
    async ({ query }: { query: string }) => {
      await hang(`lookup ${query}`);
      return `facts about ${query}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ query: z.string() }),
      metadata: { idempotent: true, effect: "read" },
    },
  );
  const sendEmail = tool(
    async ({ task }: { task: string }) => {
      await hang(`send_email ${task}`);
      if (options.confirm && interrupt({ question: `send report ${task}?` }) !== "yes")
        return "not sent";
      effect(`send ${task}`);
      return `sent report ${task}`;
    },
    { name: "send_email", description: "write", schema: z.object({ task: z.string() }) },
  );
  const researcher = new ScriptedChatModel(async (messages) => {
    const task = taskOf(messages);
    effect(`researcher ${task}`);
    const last = messages.at(-1);
    const asks = (call: string) => hang(`researcher ${task} asking ${call}`);
    if (ToolMessage.isInstance(last) && last.tool_call_id === `send-${task}`) {
      await asks("report");
      return new AIMessage(`report ${task}`);
    }
    if (ToolMessage.isInstance(last) && last.tool_call_id === `lookup-${task}`) {
      await asks("send_email");
      return new AIMessage({
        content: "",
        tool_calls: [{ id: `send-${task}`, name: "send_email", args: { task: String(task) } }],
      });
    }
    await asks("lookup");
    return new AIMessage({
      content: "",
      tool_calls: [{ id: `lookup-${task}`, name: "lookup", args: { query: String(task) } }],
    });
  });
  const research = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config: RunnableConfig) => ({
      messages: [await researcher.invoke(state.messages, config)],
    }))
    // Stopping on errors: the ledger refusing a call stops the graph (README: "Plain LangGraph graphs").
    .addNode("tools", new ToolNode([lookup, sendEmail], { handleToolErrors: false }))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) =>
      (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END,
    )
    .addEdge("tools", "agent")
    .compile(
      options.subgraphCheckpointer !== undefined
        ? { checkpointer: options.subgraphCheckpointer }
        : {},
    );
  const router = new ScriptedChatModel((messages) => {
    const task = taskOf(messages);
    effect(`router ${task}`);
    return new AIMessage(task < 2 ? `research ${task + 1}` : "finished");
  });
  const routed = new StateGraph(MessagesAnnotation).addNode(
    "router",
    async (state, config: RunnableConfig) => ({
      messages: [await router.invoke(state.messages, config)],
    }),
  );
  const withResearch =
    mode === "node"
      ? routed.addNode("research", research)
      : routed.addNode("research", async (state, config: RunnableConfig) => {
          const task = taskOf(state.messages);
          const done = await research.invoke(
            { messages: [new HumanMessage(`research ${task}`)] },
            config,
          );
          return { messages: [done.messages.at(-1) as BaseMessage] };
        });
  return withResearch
    .addEdge(START, "router")
    .addConditionalEdges("router", (state) =>
      String(state.messages.at(-1)?.content).startsWith("research") ? "research" : END,
    )
    .addEdge("research", "router")
    .compile({ checkpointer: options.checkpointer });
}

/** The supervisor's input. */
export const ASK = { messages: [new HumanMessage("research twice")] };

/** LangChain's metadata without LangGraph's checkpoint namespace. */
function withoutNamespace(metadata: Record<string, unknown> | undefined) {
  if (metadata === undefined) return undefined;
  const { langgraph_checkpoint_ns: _ns, checkpoint_ns: _checkpointNs, ...rest } = metadata;
  return rest;
}

/**
 * The handler as it recorded before subgraphs had child runs: it never reads a checkpoint
 * namespace, so every call of a thread, its subgraphs' too, is recorded in its own run, with
 * the metadata that version wrote (no `checkpointNs`). What a ledger of that version holds.
 */
export class FlatLedgerHandler extends LedgerCallbackHandler {
  override handleChatModelStart(
    ...[llm, messages, runId, parentRunId, extra, tags, metadata, name]: Parameters<
      LedgerCallbackHandler["handleChatModelStart"]
    >
  ) {
    const flat = withoutNamespace(metadata);
    return super.handleChatModelStart(llm, messages, runId, parentRunId, extra, tags, flat, name);
  }

  override handleToolStart(
    ...[tool, input, runId, parentRunId, tags, metadata, name, toolCallId]: Parameters<
      LedgerCallbackHandler["handleToolStart"]
    >
  ) {
    const flat = withoutNamespace(metadata);
    return super.handleToolStart(tool, input, runId, parentRunId, tags, flat, name, toolCallId);
  }

  override handleChainStart(
    ...[chain, inputs, runId, parentRunId, tags, metadata, runType, name]: Parameters<
      LedgerCallbackHandler["handleChainStart"]
    >
  ) {
    const flat = withoutNamespace(metadata);
    return super.handleChainStart(chain, inputs, runId, parentRunId, tags, flat, runType, name);
  }
}
