import { appendFileSync } from "node:fs";
import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, Send, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { askForLookup, flakyLookup } from "./flaky-lookup.test.data.js";
import { threadConfig, toolGraph } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "node-retry-session";
export const RUN = "node-retry-run";

/** The retryPolicy of these graphs' nodes: up to 3 runs of a task, no wait. */
const RETRY = { maxAttempts: 3, initialInterval: 0, jitter: false, logWarning: false };

/**
 * A plain graph whose tools node LangGraph runs again when it throws (`retryPolicy`, up to 3
 * runs, no wait), recorded by the handler alone, on the ledger's checkpoint saver. `lookup`
 * throws on its first `failures` runs (see flakyLookup: `inChild`, `crashOnRun`).
 */
export function retryingGraph(
  store: EventStore,
  options: { idempotent: boolean; failures: number; crashOnRun?: number; inChild?: boolean },
) {
  const { runs, lookup } = flakyLookup(options);
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const graph = toolGraph(
    new ScriptedChatModel(askForLookup),
    [lookup],
    new LedgerCheckpointSaver({ store }),
    { handleToolErrors: false },
    RETRY,
  );
  const invoke = async (input: { messages: HumanMessage[] } | null) => {
    const result = await graph.invoke(input, threadConfig(handler));
    return String(result.messages.at(-1)?.content);
  };
  return { runs, invoke };
}

/**
 * A plain graph of one model node that LangGraph runs again when it throws (`retryPolicy`),
 * recorded by the handler alone. The model throws on its first `failures` calls (overloaded),
 * then answers; in a crash child (`inChild`) each call is noted as the effect "model", and with
 * `crashOnCall` the process dies inside that call.
 */
export function retryingModelGraph(
  store: EventStore,
  options: { failures: number; crashOnCall?: number; inChild?: boolean },
) {
  const model = new ScriptedChatModel(async (_messages, call) => {
    if (options.inChild) noteEffect("model");
    if (call === options.crashOnCall) return crashHere();
    if (call <= options.failures) throw new Error(`overloaded (${call})`);
    return new AIMessage("hello");
  });
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode(
      "agent",
      async (state, config: RunnableConfig) => ({
        messages: [await model.invoke(state.messages, config)],
      }),
      { retryPolicy: RETRY },
    )
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
  const invoke = async (input: { messages: HumanMessage[] } | null) => {
    const result = await graph.invoke(input, threadConfig(handler));
    return String(result.messages.at(-1)?.content);
  };
  return { model, invoke };
}

/**
 * A plain graph whose model asks in one turn for `lookup` (throws on its first run, then
 * answers; idempotent) and `pay` (effect `write`, idempotent only with `payIdempotent`: each run
 * a line in the file `paid`), then answers with their results. The tools node has a
 * `retryPolicy` (up to 3 runs) and runs the turn's calls in one task, or with `sendPerCall` each
 * call in a task of its own (a `Send` per call, as createAgent does). Recorded by the handler
 * alone, on the ledger's checkpoint saver.
 */
export function payingGraph(
  store: EventStore,
  options: { paid: string; payIdempotent?: boolean; sendPerCall?: boolean },
) {
  const { runs, lookup } = flakyLookup({ idempotent: true, failures: 1 });
  const pay = tool(
    async ({ amount }: { amount: number }) => {
      appendFileSync(options.paid, `paid ${amount}\n`);
      return `paid ${amount}`;
    },
    {
      name: "pay",
      description: "pays (not idempotent)",
      schema: z.object({ amount: z.number() }),
      metadata: { effect: "write", ...(options.payIdempotent ? { idempotent: true } : {}) },
    },
  );
  const model = new ScriptedChatModel(async (messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length > 0)
      return new AIMessage(`done: ${results.map((message) => message.content).join(" | ")}`);
    return new AIMessage({
      content: "",
      tool_calls: [
        { id: "call-lookup", name: "lookup", args: { q: "x" } },
        { id: "call-pay", name: "pay", args: { amount: 5 } },
      ],
    });
  });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config: RunnableConfig) => ({
      messages: [await model.invoke(state.messages, config)],
    }))
    .addNode("tools", new ToolNode([lookup, pay], { handleToolErrors: false }), {
      retryPolicy: RETRY,
    })
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => {
      const calls = (state.messages.at(-1) as AIMessage).tool_calls ?? [];
      if (calls.length === 0) return END;
      if (!options.sendPerCall) return "tools";
      return calls.map((call) => new Send("tools", { ...state, lg_tool_call: call }));
    })
    .addEdge("tools", "agent")
    .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const invoke = async (
    input: { messages: HumanMessage[] } | null = { messages: [new HumanMessage("go")] },
  ) => {
    const result = await graph.invoke(input, threadConfig(handler));
    return String(result.messages.at(-1)?.content);
  };
  return { lookups: runs, invoke };
}

export const nodeRetryCrashes = {
  /** The model throws; the process dies inside the call the node's retry makes again. */
  "node-retry-model-in-flight": async (store) => {
    const { invoke } = retryingModelGraph(store, { failures: 1, crashOnCall: 2, inChild: true });
    await invoke({ messages: [new HumanMessage("hi")] });
  },
  /** `lookup` (args: "idempotent" or not) throws; the process dies inside the node's retry. */
  "node-retry-in-flight": async (store, args) => {
    const { invoke } = retryingGraph(store, {
      idempotent: args[0] === "idempotent",
      failures: 1,
      crashOnRun: 2,
      inChild: true,
    });
    await invoke({ messages: [new HumanMessage("go")] });
  },
} satisfies Record<string, CrashScenario>;
