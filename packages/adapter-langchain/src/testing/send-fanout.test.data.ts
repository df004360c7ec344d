import type { EventStore } from "@agent-ledger/core";
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  type ToolCall,
  ToolMessage,
} from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { Annotation, END, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { crashHere } from "./crash-point.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "send-fanout-session";
export const RUN = "send-fanout-run";
export const THREAD = "t1";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  summaries: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/**
 * A map-reduce graph: the agent's model asks in one turn for `charge` 1, 2 and 3 (not
 * idempotent), each sent to the ToolNode as its own `Send` task (as createAgent does), beside a
 * `summarize` task per amount that calls the same model (three parallel model calls). `effect`
 * hears of each charge made and each model call paid (`charge 2`, `summarize 2`, `agent`).
 * With `crash`, `charge 2` and `summarize 2` never return and the process stops inside charge 2
 * once LangGraph has saved the writes of the four other tasks.
 */
export function fanoutGraph(
  store: EventStore,
  options: { effect: (name: string) => void; crash?: boolean },
) {
  const { effect, crash = false } = options;
  let graph: ReturnType<typeof build> | undefined;
  const config = { configurable: { thread_id: THREAD } };
  /** Waits until the checkpoint holds the writes of the four other tasks, then dies. */
  const crashOnceOthersSaved = async () => {
    for (;;) {
      const state = await graph?.getState(config);
      const saved = state?.tasks.filter((task) => task.result !== undefined && !task.error);
      if ((saved?.length ?? 0) >= 4) return crashHere();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const charge = tool(
    async ({ amount }: { amount: number }) => {
      effect(`charge ${amount}`);
      if (crash && amount === 2) return crashOnceOthersSaved();
      return `charged ${amount}`;
    },
    {
      name: "charge",
      description: "charges the card (not idempotent)",
      schema: z.object({ amount: z.number() }),
    },
  );
  const model = new ScriptedChatModel(async (messages: BaseMessage[]) => {
    const first = String(messages[0]?.content);
    if (first.startsWith("summarize ")) {
      effect(first);
      // In flight at the crash: never answers.
      if (crash && first === "summarize 2") await new Promise(() => {});
      return new AIMessage(`summary of ${first.slice("summarize ".length)}`);
    }
    effect("agent");
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length > 0)
      return new AIMessage(`done: ${results.map((message) => message.content).join(" | ")}`);
    return new AIMessage({
      content: "",
      tool_calls: [1, 2, 3].map((amount) => ({
        id: `call-${amount}`,
        name: "charge",
        args: { amount },
      })),
    });
  });
  const build = () =>
    new StateGraph(State)
      .addNode("agent", async (state, runConfig: RunnableConfig) => ({
        messages: [await model.invoke(state.messages, runConfig)],
      }))
      .addNode("tools", new ToolNode([charge], { handleToolErrors: false }))
      .addNode(
        "summarize",
        async ({ item, call }: { item: number; call: ToolCall }, runConfig: RunnableConfig) => {
          // The worker hands its model the call it summarizes (one of the agent's turn, a shape
          // providers take): it is still no turn of the agent's (restoreMessages).
          const answer = await model.invoke(
            [
              new HumanMessage(`summarize ${item}`),
              new AIMessage({ content: "", tool_calls: [call] }),
            ],
            runConfig,
          );
          return { summaries: [String(answer.content)] };
        },
      )
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (state) => {
        const calls = (state.messages.at(-1) as AIMessage).tool_calls ?? [];
        if (calls.length === 0) return END;
        return [
          ...calls.map((call) => new Send("tools", { ...state, lg_tool_call: call })),
          ...calls.map((call) => new Send("summarize", { item: call.args.amount, call })),
        ];
      })
      .addEdge("tools", "agent")
      .addEdge("summarize", "agent")
      .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
  graph = build();
  return graph;
}
