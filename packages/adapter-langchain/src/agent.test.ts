import {
  type EventStore,
  findLedgerError,
  inspectSession,
  MemoryEventStore,
} from "@agent-ledger/core";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { createAgent, toolErrorMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  abortedInsideSend,
  agentFor,
  RUN,
  SESSION,
  script,
  world,
} from "./testing/agent.test.data.js";
import { FlakyStore, payloadOf, runEvents, threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

/** Runs the agent of `world()` on a store that cannot commit events of one type. */
async function runWhereStoreRefuses(type: string) {
  const store = new FlakyStore();
  store.failing = true;
  store.failTypes = [type];
  const { tools, effects } = world();
  const { agent, handler, model } = agentFor(store, tools);
  const error = await agent
    .invoke({ messages: [{ role: "user", content: "go" }] }, threadConfig(handler))
    .catch((caught: unknown) => caught);
  return { store, effects, model, error };
}

// Concurrent: the tests share nothing (each has its own ledger). Those that resume a run a
// crash left are in agent-resume.test.ts.
describe.concurrent("createAgent with the handler, the middleware and the saver", () => {
  it("records parallel tool calls once each, caused by the completion that asked for them", async () => {
    const store = new MemoryEventStore();
    const { tools, effects } = world();
    const { agent, handler, model } = agentFor(store, tools);
    const result = await agent.invoke(
      { messages: [{ role: "user", content: "go" }] },
      threadConfig(handler),
    );
    expect(result.messages.at(-1)?.content).toBe("final: value of x | sent to bob");
    expect(model.calls).toBe(2);
    expect(effects).toEqual({ lookup: 1, send: 1 });
    const events = await runEvents(store, SESSION, RUN);
    const completions = events.filter((event) => event.type === "model.completed");
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(requested).toHaveLength(2);
    for (const event of requested) expect(event.causedByEventId).toBe(completions[0]?.eventId);
    expect(events.filter((event) => event.type === "tool.completed")).toHaveLength(2);
    expect(events.filter((event) => event.type === "model.requested")).toHaveLength(2);
    const nodes = events
      .filter((event) => event.type === "x.langchain.chain.started")
      .map((event) => (event.payload as { node?: string }).node)
      .filter(Boolean);
    expect(nodes).toContain("model_request");
    expect(nodes).toContain("tools");
  });

  it("records tool calls through the callback alone when there is no middleware", async () => {
    const store = new MemoryEventStore();
    const { tools } = world();
    const model = new ScriptedChatModel((messages) => script(messages));
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const agent = createAgent({ model, tools });
    await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { callbacks: [handler] });
    const events = await runEvents(store, SESSION, RUN);
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(
      requested.map((event) => (event.payload as { toolCallId: string }).toolCallId).sort(),
    ).toEqual(["call-lookup", "call-send"]);
    expect(events.filter((event) => event.type === "tool.completed")).toHaveLength(2);
  });

  it("records a tool call that has no id once, by the middleware", async () => {
    const store = new MemoryEventStore();
    const { tools, effects } = world();
    // Some models give tool calls no id: LangChain's ToolCall.id is optional.
    const model = new ScriptedChatModel((messages) =>
      messages.some((message) => ToolMessage.isInstance(message))
        ? new AIMessage("done")
        : new AIMessage({ content: "", tool_calls: [{ name: "lookup", args: { key: "x" } }] }),
    );
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const agent = createAgent({ model, tools, middleware: [ledgerMiddleware({ handler })] });
    await agent.invoke({ messages: [{ role: "user", content: "go" }] }, { callbacks: [handler] });
    expect(effects.lookup).toBe(1);
    const events = await runEvents(store, SESSION, RUN);
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(requested).toHaveLength(1);
    // Where in the graph it ran: the agent's tools node (see "Subgraphs: a child run per invocation").
    expect((requested[0]?.metadata as { langchain?: unknown } | undefined)?.langchain).toEqual({
      recordedBy: "middleware",
      checkpointNs: expect.stringMatching(/^tools:/),
    });
    expect(events.filter((event) => event.type === "tool.completed")).toHaveLength(1);
  });

  it("runs and records a tool call whose id is empty (Gemini's OpenAI-compatible API gives those)", async () => {
    for (const withMiddleware of [true, false]) {
      const store = new MemoryEventStore();
      const { tools, effects } = world();
      const model = new ScriptedChatModel((messages) =>
        messages.some((message) => ToolMessage.isInstance(message))
          ? new AIMessage(`done: ${String(messages.at(-1)?.content)}`)
          : new AIMessage({
              content: "",
              tool_calls: [{ id: "", name: "lookup", args: { key: "x" } }],
            }),
      );
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const middleware = withMiddleware ? [ledgerMiddleware({ handler })] : [];
      const agent = createAgent({ model, tools, middleware });
      const result = await agent.invoke(
        { messages: [{ role: "user", content: "go" }] },
        { callbacks: [handler] },
      );
      expect(result.messages.at(-1)?.content).toBe("done: value of x");
      expect(effects.lookup).toBe(1);
      const events = await runEvents(store, SESSION, RUN);
      const requested = events.filter((event) => event.type === "tool.requested");
      expect(requested).toHaveLength(1);
      expect(payloadOf<{ name: string }>(requested[0]).name).toBe("lookup");
      expect(events.filter((event) => event.type === "tool.completed")).toHaveLength(1);
    }
  });

  it("with toolErrorMiddleware before it, a tool's error goes to the model and a ledger error still stops the agent", async () => {
    const failing = tool(
      async () => {
        throw new Error("smtp is down");
      },
      { name: "send", description: "write", schema: z.object({ to: z.string() }) },
    );
    const [lookup] = world().tools;
    if (!lookup) throw new Error("expected the lookup tool");
    const run = async (store: EventStore) => {
      const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
      const agent = createAgent({
        model: new ScriptedChatModel((messages) => script(messages)),
        tools: [lookup, failing],
        // The README's setup: errors of the tool itself become a ToolMessage, ledger errors do not.
        middleware: [
          toolErrorMiddleware({
            onError: (error) =>
              findLedgerError(error) ? undefined : `failed: ${(error as Error).message}`,
          }),
          ledgerMiddleware({ handler }),
        ],
      });
      return agent.invoke(
        { messages: [{ role: "user", content: "go" }] },
        { callbacks: [handler] },
      );
    };
    const store = new MemoryEventStore();
    const result = await run(store);
    expect(result.messages.at(-1)?.content).toBe("final: value of x | failed: smtp is down");
    const events = await runEvents(store, SESSION, RUN);
    expect(events.filter((event) => event.type === "tool.failed")).toHaveLength(1);

    const down = new FlakyStore();
    down.failing = true;
    down.failTypes = ["tool.requested"];
    expect(findLedgerError(await run(down).catch((caught: unknown) => caught))).toBeDefined();
  });

  it("fails closed: a model call that cannot be recorded stops the agent before the model runs", async () => {
    const { error, model } = await runWhereStoreRefuses("model.requested");
    expect(findLedgerError(error, "store-unavailable")).toBeDefined();
    expect(model.calls).toBe(0);
  });

  it("fails closed: a tool call that cannot be recorded stops the agent before the tool runs", async () => {
    const { error, effects } = await runWhereStoreRefuses("tool.requested");
    expect(findLedgerError(error, "store-unavailable")).toBeDefined();
    expect(effects).toEqual({ lookup: 0, send: 0 });
  });

  it("a tool whose completion cannot be recorded is left unresolved, not recorded as failed", async () => {
    const { store, error, effects } = await runWhereStoreRefuses("tool.completed");
    expect(findLedgerError(error, "store-unavailable")).toBeDefined();
    // Both tools ran: the ledger must not say they failed (a resume would tell the model so).
    expect(effects).toEqual({ lookup: 1, send: 1 });
    const events = await runEvents(store, SESSION, RUN);
    expect(events.filter((event) => event.type === "tool.failed")).toEqual([]);
    expect(
      (await inspectSession(store, SESSION)).unresolved.map((attempt) => attempt.name).sort(),
    ).toEqual(["lookup", "send"]);
  });

  it("a tool call cut off by aborting the run is left unresolved, not recorded as failed (it may still happen)", async () => {
    const store = new MemoryEventStore();
    // The run is aborted while send runs; send does not watch the signal and completes anyway.
    const { error, effects } = await abortedInsideSend(store);
    expect((error as Error).name).toBe("AbortError");
    expect(effects.send).toBe(1);
    const events = await runEvents(store, SESSION, RUN);
    const sendAttempt = events.find(
      (event) =>
        event.type === "tool.requested" && payloadOf<{ name: string }>(event).name === "send",
    )?.attemptId;
    expect(sendAttempt).toBeDefined();
    expect(
      events.filter((event) => event.attemptId === sendAttempt).map((event) => event.type),
    ).toEqual(["tool.requested"]);
    expect(
      (await inspectSession(store, SESSION)).unresolved.map((attempt) => attempt.attemptId),
    ).toContain(sendAttempt);
  });

  it("records a tool result cut in the middle of an emoji (a lone surrogate) and goes on", async () => {
    const store = new MemoryEventStore();
    // A tool that truncates its text by UTF-16 units, as `slice` does: half an emoji stays.
    const { tools, effects } = world();
    const [, send] = tools;
    const truncating = tool(async ({ key }: { key: string }) => `value of ${key} 😀`.slice(0, -1), {
      name: "lookup",
      description: "read",
      schema: z.object({ key: z.string() }),
      metadata: { idempotent: true },
    });
    if (!send) throw new Error("expected the send tool");
    const { agent, handler, model } = agentFor(store, [truncating, send]);
    const result = await agent.invoke(
      { messages: [{ role: "user", content: "go" }] },
      threadConfig(handler),
    );
    expect(model.calls).toBe(2);
    expect(effects.send).toBe(1);
    expect(result.messages.at(-1)?.content).toBe("final: value of x \uD83D | sent to bob");
    const events = await runEvents(store, SESSION, RUN);
    const completed = events.filter((event) => event.type === "tool.completed");
    expect(completed).toHaveLength(2);
    expect(JSON.stringify(completed)).toContain("value of x \uFFFD");
    expect(events.filter((event) => event.type === "tool.failed")).toEqual([]);
    expect(events.filter((event) => event.type === "model.completed")).toHaveLength(2);
  });
});
