import { MemoryEventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { type StructuredTool, tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { keptBy, LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";
import { lookupAndFail } from "./testing/sibling-failure.test.data.js";

const SESSION = "long-lived";
const RUN = "server";
const schema = z.object({ turn: z.number() });

/**
 * A model that asks for each of `tools` (fresh ids each turn; `fail` every fourth turn only),
 * then answers with their results, or throws (every fifth turn: a model call that fails, in a
 * LangGraph task that is not run again).
 */
function toolAsker(tools: readonly string[]) {
  let turn = 0;
  return new ScriptedChatModel((messages: BaseMessage[]) => {
    const last = messages.at(-1);
    if (!ToolMessage.isInstance(last)) {
      turn++;
      const asked = tools.filter((name) => name !== "fail" || turn % 4 === 1);
      return new AIMessage({
        content: "",
        tool_calls: asked.map((name) => ({ id: `${name}-${turn}`, name, args: { turn } })),
      });
    }
    if (turn % 5 === 3) throw new Error(`the model is overloaded (turn ${turn})`);
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    return new AIMessage(`done: ${results.map((result) => String(result.content)).join(" | ")}`);
  });
}

/**
 * One handler's agents, as a server keeps them: an agent whose model asks, each turn, for
 * `lookup`, for `fail` (which throws) and for `delegate`, which runs a sub-agent on the same
 * handler (its model asks for `lookup`); with ledgerMiddleware, or recorded by the callbacks.
 */
function server(withMiddleware: boolean) {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const middleware = withMiddleware ? [ledgerMiddleware({ handler })] : [];
  const { lookup, fail } = lookupAndFail(async ({ turn }) => `found ${turn}`);
  const subAgent = createAgent({ model: toolAsker(["lookup"]), tools: [lookup], middleware });
  const delegate = tool(
    async ({ turn }: { turn: number }, config) => {
      const result = await subAgent.invoke(
        { messages: [new HumanMessage(`look up ${turn}`)] },
        config,
      );
      return String(result.messages.at(-1)?.content);
    },
    {
      name: "delegate",
      description: "runs a sub-agent",
      schema,
      metadata: { idempotent: true },
    },
  );
  const tools: StructuredTool[] = [lookup, fail, delegate];
  const agent = createAgent({
    model: toolAsker(tools.map((each) => each.name)),
    tools,
    middleware,
  });
  return { handler, agent };
}

/**
 * What a handler keeps per LangGraph thread (or for calls outside one): its last completion's
 * causes, and what a thread whose last invocation failed keeps for its next one. Everything
 * else is kept for a call or run in progress only.
 */
const PER_THREAD = new Set([
  "pendingThreads",
  "flatThreads",
  "causes",
  "threadCompletions",
  "recordedCauses",
  "steps",
  "recordedSteps",
]);
/**
 * Bounded by the failed steps only: the subgraphs' child recorders are let go of when their
 * thread's invocation settles (`SubgraphRuns.invocationSettled`), but those of an invocation
 * that failed are kept until the handler's recorder is reopened (`subgraphChildren`), or for the
 * handler's life (`subgraphRecorders`), as a call LangChain ends late may still be recorded on
 * one. Here they are the sub-agents LangGraph let run on after a failed step, one per failed turn.
 */
const NOT_BOUNDED = new Set(["subgraphChildren", "subgraphRecorders"]);
const THREADS = 3;
/**
 * Turns each handler serves: the turn's thread (turn % 3), its asking for `fail` (every fourth) and
 * its model failing (every fifth) come round together every 60 turns, so each mix of the three is
 * served once; anything kept per call or per turn would then be 60 entries or more, against the
 * at most 10 a thread's last turn leaves.
 */
const TURNS = 60;

describe("a handler serving many runs", () => {
  for (const withMiddleware of [true, false])
    it(`keeps nothing per call or run once it ended, and per thread only its last turn (${withMiddleware ? "ledgerMiddleware" : "callbacks alone"})`, async () => {
      const { handler, agent } = server(withMiddleware);
      const outcomes: string[] = [];
      for (let turn = 0; turn < TURNS; turn++) {
        const config = threadConfig(handler, `thread-${turn % THREADS}`);
        outcomes.push(
          await agent.invoke({ messages: [new HumanMessage(`turn ${turn}`)] }, config).then(
            (done) => String(done.messages.at(-1)?.content),
            (error: unknown) => `failed: ${String(error)}`,
          ),
        );
      }

      // Every fourth turn asks for fail: ledgerMiddleware records its error and throws it, the
      // callbacks alone let createAgent's tool node hand it to the model.
      expect(outcomes[1]).toBe("done: found 2 | done: found 2");
      expect(outcomes[2]).toBe("failed: Error: the model is overloaded (turn 3)");
      expect(outcomes[0]).toMatch(
        withMiddleware ? /^failed: .*(superstep|the service is down)/ : /the service is down/,
      );
      const sizes = keptBy(handler);
      // Every name checked below is one the handler reports: a renamed map is no pass.
      expect(Object.keys(sizes)).toEqual(expect.arrayContaining([...NOT_BOUNDED, ...PER_THREAD]));
      // At most one per turn whose step failed beside a sub-agent (every fourth asks for fail).
      for (const name of NOT_BOUNDED)
        expect({ name, size: Math.min(sizes[name] as number, TURNS / 4) }).toEqual({
          name,
          size: sizes[name],
        });
      const kept = Object.entries(sizes).filter(([name]) => !NOT_BOUNDED.has(name));
      expect(kept.filter(([name, size]) => !PER_THREAD.has(name) && size > 0)).toEqual([]);
      // A turn asks for three calls; a thread's last completion is its turn's answer.
      for (const [name, size] of kept.filter(([name]) => PER_THREAD.has(name)))
        expect({ name, size: Math.min(size, 3 * THREADS + 1) }).toEqual({ name, size });
    });
});
