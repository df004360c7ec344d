import { type LedgerEvent, MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "sibling-failure";
const RUN = "server";
const schema = z.object({ turn: z.number() });

/**
 * An agent whose model asks, in its first turn, for `fail` (which throws) and `delegate` (which
 * runs a sub-agent on the same handler, its model asking for `lookup`) in the same step, then
 * for `delegate` alone. ledgerMiddleware on both. The first sub-agent's model call waits for the
 * next turn to start: LangGraph lets it run on after `fail` failed the step, and it goes on
 * while the next turn runs. That turn's answer waits for it to stop.
 */
function server() {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const middleware = [ledgerMiddleware({ handler })];
  let nextTurnStarted = () => {};
  const nextTurn = new Promise<void>((resolve) => {
    nextTurnStarted = resolve;
  });
  const subAgents: Promise<unknown>[] = [];
  const lookup = tool(async ({ turn }: { turn: number }) => `found ${turn}`, {
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
  const subModel = new ScriptedChatModel(async (messages: BaseMessage[], call) => {
    if (call === 1) await nextTurn;
    const result = messages.find((message) => ToolMessage.isInstance(message));
    if (result) return new AIMessage(`done: ${String(result.content)}`);
    return new AIMessage({
      content: "",
      tool_calls: [{ id: `lookup-${call}`, name: "lookup", args: { turn: call } }],
    });
  });
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
  return { store, handler, agent };
}

/** The chains started in the session and not ended, by LangChain's run id. */
function chainsLeftOpen(events: readonly LedgerEvent[]): LedgerEvent[] {
  const ended = new Set(
    events
      .filter((event) => /^x\.langchain\.chain\.(completed|failed)$/.test(event.type))
      .map((event) => (event.payload as { chainRunId?: string }).chainRunId),
  );
  return events.filter(
    (event) =>
      event.type === "x.langchain.chain.started" &&
      !ended.has((event.payload as { chainRunId?: string }).chainRunId),
  );
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("a sub-agent LangGraph lets run on after a tool beside it failed the step", () => {
  it("is recorded by one writer, its chains closed, and the thread's next turn works", async () => {
    const errors = vi.spyOn(console, "error");
    const { store, handler, agent } = server();
    const config = threadConfig(handler, "thread-1");

    const first = await agent.invoke({ messages: [new HumanMessage("turn 1")] }, config).then(
      () => "done",
      (error: unknown) => String(error),
    );
    expect(first).toMatch(/the service is down/);
    const second = await agent.invoke({ messages: [new HumanMessage("turn 2")] }, config);
    expect(String(second.messages.at(-1)?.content)).toBe("done: done: found 2");

    // LangChain's callback manager logs what a handler's callback threw (a ConflictError of two
    // recorders writing the sub-agent's run, as its chain ended).
    expect(errors.mock.calls.map((call) => String(call[0]))).toEqual([]);
    const events = await readWholeSession(store, SESSION);
    const subAgentRun = events.find(
      (event) => event.type === "run.started" && event.runId.startsWith(`${RUN}>thread-1>tools:`),
    )?.runId;
    // The sub-agent's calls made after its tool call ended are recorded in its subgraph's run.
    expect(
      events.filter((event) => event.runId === subAgentRun).map((event) => event.type),
    ).toEqual(
      expect.arrayContaining(["model.requested", "model.completed", "x.langchain.chain.completed"]),
    );
    // Every chain ended, but the first sub-agent's graph: LangChain reports no end for it.
    expect(chainsLeftOpen(events).map((event) => [event.runId, event.payload])).toEqual([
      [RUN, { chainRunId: expect.any(String), name: "LangGraph" }],
    ]);

    // delegate-1, stopped beside fail, stays unresolved (it may have had its effect): the run
    // can be failed, not completed; the sub-agent's run is closed with it.
    await handler.failRun(new Error("shutting down"));
    const runs = await store.listRuns(SESSION);
    expect(runs.find((run) => run.runId === subAgentRun)?.status).toBe("failed");
  });
});
