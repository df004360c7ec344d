import { appendFileSync } from "node:fs";
import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { restoreMessages } from "../restore-messages.js";
import { type CrashScenario, crashHere } from "./crash-point.js";
import { threadConfig, toolGraph } from "./helpers.js";

export const SESSION = "pay-session";
export const RUN = "pay-run";
export const THREAD = "pay-thread";

/**
 * How the graph is built and where its checkpoints go: createAgent with ledgerMiddleware and
 * the ledger's saver ("agent"), or a plain graph (ToolNode, the handler alone) on LangGraph's
 * own SqliteSaver in the file `saverPath` ("graph").
 */
export type PayGraph = "agent" | "graph";

/**
 * One process's world in `sessionId`: a model (LangChain's fakeModel) that asks for `pay` once
 * per user message (tool call id `call-pay-<n>` on the n-th), then answers with its result;
 * `pay` (not idempotent) writes a line to the log file `payments` for each payment, and with
 * `crash` the process dies inside it, once paid.
 */
export function payWorld(options: {
  store: EventStore;
  sessionId: string;
  graph: PayGraph;
  payments: string;
  saverPath: string;
  crash?: boolean;
}) {
  const { store, sessionId, payments } = options;
  const pay = tool(
    async ({ amount }: { amount: number }) => {
      appendFileSync(payments, `paid ${amount}\n`);
      if (options.crash) return crashHere();
      return `paid ${amount}`;
    },
    { name: "pay", description: "pays", schema: z.object({ amount: z.number() }) },
  );
  const decide = (messages: BaseMessage[]) => {
    const last = messages.findLastIndex((message) => HumanMessage.isInstance(message));
    const results = messages.slice(last).filter((message) => ToolMessage.isInstance(message));
    // A tool call id per turn: LangGraph's ToolNode skips a call its state has a result for.
    const turn = messages.filter((message) => HumanMessage.isInstance(message)).length;
    if (results.length === 0)
      return new AIMessage({
        content: "",
        tool_calls: [{ id: `call-pay-${turn}`, name: "pay", args: { amount: 5 } }],
      });
    return new AIMessage(`done: ${results.map((result) => String(result.content)).join(" | ")}`);
  };
  const model = fakeModel();
  for (let call = 0; call < 8; call++) model.respond(decide);
  const handler = new LedgerCallbackHandler({ store, sessionId, runId: RUN });
  const saver =
    options.graph === "graph" ? SqliteSaver.fromConnString(options.saverPath) : undefined;
  const graph = saver
    ? toolGraph(model.bindTools([pay]), [pay], saver, { handleToolErrors: false })
    : createAgent({
        model,
        tools: [pay],
        middleware: [ledgerMiddleware({ handler })],
        checkpointer: new LedgerCheckpointSaver({ store }),
      });
  const run = (input: { messages: HumanMessage[] } | Command | null, thread = THREAD) =>
    graph.invoke(input, threadConfig(handler, thread)) as Promise<{ messages: BaseMessage[] }>;
  const settled = (result: Promise<{ messages: BaseMessage[] }>) =>
    result.then(
      (done) => ({ answer: String(done.messages.at(-1)?.content) }),
      (error: unknown) => ({ error }),
    );
  return {
    model,
    handler,
    /** A new task on the thread: the user asks to pay. */
    start: (thread?: string) => run({ messages: [new HumanMessage("pay 5")] }, thread),
    /** Resumes the thread from its last checkpoint; the answer, or what it threw. */
    resume: () => settled(run(null)),
    /**
     * Once a person decided on pay: resumes, with the turn's answers from the ledger in a plain
     * graph (its callback cannot answer a call; README "Plain LangGraph graphs").
     */
    afterDecision: async () => {
      if (options.graph === "agent") return settled(run(null));
      const { toolMessages } = await restoreMessages(
        store,
        { sessionId, runId: RUN },
        { threadId: THREAD },
      );
      return settled(run(new Command({ update: { messages: toolMessages }, goto: "tools" })));
    },
    /** Closes LangGraph's SqliteSaver, if the world has one. */
    close: () => {
      saver?.db.close();
    },
  };
}

export const otherSessionCallsCrashes = {
  /** In SESSION, the process dies inside pay; args: the payments log, PayGraph, the saver's file. */
  "other-session-calls:pay-in-flight": async (store, [payments, graph, saverPath]) => {
    await payWorld({
      store,
      sessionId: SESSION,
      graph: graph as PayGraph,
      payments: String(payments),
      saverPath: String(saverPath),
      crash: true,
    }).start();
  },
} satisfies Record<string, CrashScenario>;
