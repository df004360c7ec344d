import { type LedgerEvent, MemoryEventStore, readWholeSession } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "middleware-reopened";
const RUN = "server";
const schema = z.object({ turn: z.number() });

/**
 * An agent whose model asks, in its first turn, for `fail` (which throws) and `delegate` (which
 * runs a sub-agent on the same handler) in the same step, then for `delegate` alone.
 * ledgerMiddleware on both. LangGraph lets the first sub-agent run on after `fail` failed the
 * step: once that invocation has failed, it asks for `lookup`, which ledgerMiddleware records
 * (in the sub-agent's run) and which waits for the thread's next turn, whose start reopens the
 * handler's recorder. Then `lookup` asks a model itself, recorded in the same run, and returns.
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
  let lookupStarted = () => {};
  const lookupRunning = new Promise<void>((resolve) => {
    lookupStarted = resolve;
  });
  const summarizer = new ScriptedChatModel(() => new AIMessage("summed up"));
  const lookup = tool(
    async ({ turn }: { turn: number }, config) => {
      if (turn === 1) {
        lookupStarted();
        await nextTurn;
        await summarizer.invoke([new HumanMessage(`sum up ${turn}`)], config);
      }
      return `found ${turn}`;
    },
    { name: "lookup", description: "reads", schema, metadata: { idempotent: true } },
  );
  const fail = tool(
    async ({ turn }: { turn: number }): Promise<string> => {
      throw new Error(`the service is down (turn ${turn})`);
    },
    { name: "fail", description: "writes", schema },
  );
  let firstTurnEnded = () => {};
  const firstTurnOver = new Promise<void>((resolve) => {
    firstTurnEnded = resolve;
  });
  let subTurn = 0;
  const subModel = new ScriptedChatModel(async (messages: BaseMessage[]) => {
    const result = messages.find((message) => ToolMessage.isInstance(message));
    if (result) return new AIMessage(`done: ${String(result.content)}`);
    subTurn++;
    // The first sub-agent asks for its lookup once its invocation has failed.
    if (subTurn === 1) await firstTurnOver;
    return new AIMessage({
      content: "",
      tool_calls: [{ id: `lookup-${subTurn}`, name: "lookup", args: { turn: subTurn } }],
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
  return { store, handler, agent, subAgents, firstTurnEnded, lookupRunning };
}

describe("a sub-agent's tool call that ledgerMiddleware records, running on after a tool beside its own failed the step", () => {
  it("records its outcome in the sub-agent's run after the thread's next turn reopened the handler's recorder", async () => {
    const { store, handler, agent, subAgents, firstTurnEnded, lookupRunning } = server();
    const config = threadConfig(handler, "thread-1");

    const first = await agent.invoke({ messages: [new HumanMessage("turn 1")] }, config).then(
      () => "done",
      (error: unknown) => String(error),
    );
    expect(first).toMatch(/the service is down/);
    firstTurnEnded();
    await lookupRunning;
    const second = await agent.invoke({ messages: [new HumanMessage("turn 2")] }, config);
    expect(String(second.messages.at(-1)?.content)).toBe("done: done: found 2");

    // The first sub-agent's graph ends aborted with its step, after its lookup ran to its end.
    const settled = await Promise.allSettled(subAgents);
    expect(
      settled.map((each) => (each.status === "rejected" ? String(each.reason) : each.status)),
    ).toEqual([expect.stringMatching(/^AbortError/), "fulfilled"]);
    const events = await readWholeSession(store, SESSION);
    const lookup = events.find(
      (event) =>
        event.type === "tool.requested" &&
        (event.payload as { toolCallId?: string }).toolCallId === "lookup-1",
    );
    expect(lookup?.runId).toMatch(new RegExp(`^${RUN}>thread-1>tools:`));
    const outcomes = events.filter(
      (event) => event.attemptId === lookup?.attemptId && event.type !== "tool.requested",
    );
    const content = (event: LedgerEvent) =>
      (event.payload as { result?: { data?: { content?: unknown } } }).result?.data?.content;
    expect(outcomes.map((event) => [event.type, event.runId, content(event)])).toEqual([
      ["tool.completed", lookup?.runId, "found 1"],
    ]);
    // Written by the sub-agent run's one writer: its tools node ended, not with a ConflictError.
    const failedChains = events.filter(
      (event) => event.runId === lookup?.runId && event.type === "x.langchain.chain.failed",
    );
    expect(failedChains).toEqual([]);
    await handler.failRun(new Error("shutting down"));
  });
});
