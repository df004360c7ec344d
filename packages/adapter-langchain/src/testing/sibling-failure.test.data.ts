import { MemoryEventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type ToolRunnableConfig, tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type Script, ScriptedChatModel } from "./scripted-chat-model.js";

export const RUN = "server";

/** The sub-agent's model's script and the body of its one tool, `lookup`. */
export interface SubAgentScript {
  model: Script;
  lookup: (input: { turn: number }, config: ToolRunnableConfig) => Promise<string>;
}

const schema = z.object({ turn: z.number() });

/**
 * The agents' `lookup` (idempotent, answered by `body`) and `fail` (which throws, naming the
 * turn) tools, both taking `{ turn }`.
 */
export function lookupAndFail(body: SubAgentScript["lookup"]) {
  const lookup = tool(body, {
    name: "lookup",
    description: "reads",
    schema,
    metadata: { idempotent: true },
  });
  const fail = tool(
    async ({ turn }: { turn: number }): Promise<string> => {
      throw new Error(`the service is down (turn ${turn})`);
    },
    { name: "fail", description: "writes", schema },
  );
  return { lookup, fail };
}

/** The sub-agent's model's call for `lookup`, its id and argument numbered `turn`. */
export function askLookup(turn: number): AIMessage {
  return new AIMessage({
    content: "",
    tool_calls: [{ id: `lookup-${turn}`, name: "lookup", args: { turn } }],
  });
}

/**
 * A server's agent whose model asks, in its first turn, for `fail` (which throws) and `delegate`
 * (which runs a sub-agent on the same handler, its model asking for `lookup`) in the same step,
 * then for `delegate` alone. ledgerMiddleware on both. A turn's answer waits for every sub-agent
 * started so far to settle. `subAgent` scripts the sub-agent, given the promise that the thread's
 * second turn has started (LangGraph lets the first sub-agent run on after `fail` failed the
 * step).
 */
export function siblingFailureServer(options: {
  sessionId: string;
  subAgent: (nextTurn: Promise<void>) => SubAgentScript;
}) {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, sessionId: options.sessionId, runId: RUN });
  const middleware = [ledgerMiddleware({ handler })];
  let nextTurnStarted = () => {};
  const nextTurn = new Promise<void>((resolve) => {
    nextTurnStarted = resolve;
  });
  const scripted = options.subAgent(nextTurn);
  const subAgents: Promise<unknown>[] = [];
  const { lookup, fail } = lookupAndFail(scripted.lookup);
  const subModel = new ScriptedChatModel(scripted.model);
  const subAgent = createAgent({ model: subModel, tools: [lookup], middleware });
  const delegate = tool(
    async ({ turn }: { turn: number }, config) => {
      const running = subAgent.invoke({ messages: [new HumanMessage(`look up ${turn}`)] }, config);
      subAgents.push(running);
      const result = await running;
      return String(result.messages.at(-1)?.content);
    },
    { name: "delegate", description: "runs a sub-agent", schema, metadata: { idempotent: true } },
  );
  let turn = 0;
  const model = new ScriptedChatModel(async (messages: BaseMessage[]) => {
    const results = messages.slice(messages.findLastIndex(HumanMessage.isInstance) + 1);
    if (results.length === 0) {
      turn++;
      if (turn === 2) nextTurnStarted();
      const asked = turn === 1 ? ["fail", "delegate"] : ["delegate"];
      return new AIMessage({
        content: "",
        tool_calls: asked.map((name) => ({ id: `${name}-${turn}`, name, args: { turn } })),
      });
    }
    await Promise.allSettled(subAgents);
    const answers = results.filter((message) => ToolMessage.isInstance(message));
    return new AIMessage(`done: ${answers.map((answer) => String(answer.content)).join(" | ")}`);
  });
  const agent = createAgent({ model, tools: [fail, delegate], middleware });
  return { store, handler, agent, subAgents };
}
