import { join } from "node:path";
import { LedgerError, MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { RunnableLambda, RunnableSequence } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { FakeLLM } from "@langchain/core/utils/testing";
import { GraphInterrupt } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { restoreMessages } from "./restore-messages.js";
import { RUN, SESSION, searches } from "./testing/callback-handler.test.data.js";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { FlakyStore, payloadOf, runEvents } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("langchain-callback-", { beforeAll, afterAll });

function setup(script = (_: unknown, call: number) => new AIMessage(`answer ${call}`)) {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const model = new ScriptedChatModel(script);
  return { store, handler, model };
}

describe("LedgerCallbackHandler: models", () => {
  it("records a chat call on invoke: messages without ids, model, params without secrets, usage", async () => {
    const { store, handler, model } = setup();
    const answer = await model.invoke([new HumanMessage({ content: "hi", id: "random-id" })], {
      callbacks: [handler],
    });
    expect(answer.content).toBe("answer 1");
    const events = await runEvents(store, SESSION, RUN);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
    ]);
    const [, requested, completed] = events;
    const request = payloadOf<{ request: Record<string, unknown> }>(requested).request;
    expect(request.model).toBe("scripted-1");
    expect(request.messages).toEqual([
      { type: "human", data: { content: "hi", additional_kwargs: {}, response_metadata: {} } },
    ]);
    expect(request.params).toEqual({ model: "scripted-1", temperature: 0, tools: [] });
    expect(JSON.stringify(events)).not.toContain("sk-test-secret");
    const response = payloadOf<{ response: Record<string, unknown> }>(completed).response;
    expect(response.usage).toEqual({ input_tokens: 1, output_tokens: 3, total_tokens: 4 });
    expect(completed?.attemptId).toBe(requested?.attemptId);
    expect(completed?.causedByEventId).toBe(requested?.eventId);
    const langchain = (requested?.metadata as { langchain: { runId: string } } | undefined)
      ?.langchain;
    expect(typeof langchain?.runId).toBe("string");
  });

  it("records a streamed call once, with the aggregated message", async () => {
    const { store, handler, model } = setup(() => new AIMessage("one two three"));
    const chunks: string[] = [];
    for await (const chunk of await model.stream("go", { callbacks: [handler] }))
      chunks.push(String(chunk.content));
    expect(chunks.length).toBe(3);
    const events = await runEvents(store, SESSION, RUN);
    const completed = events.filter((event) => event.type === "model.completed");
    expect(completed).toHaveLength(1);
    const response = completed[0]?.payload as { response: { generations: { text: string }[][] } };
    expect(response.response.generations[0]?.[0]?.text).toBe("one two three");
  });

  it("records each prompt of a batch as its own attempt", async () => {
    const { store, handler, model } = setup(
      (messages) => new AIMessage(`echo ${String((messages as HumanMessage[])[0]?.content)}`),
    );
    const answers = await model.batch(["a", "b", "c"], { callbacks: [handler] });
    expect(answers.map((answer) => answer.content)).toEqual(["echo a", "echo b", "echo c"]);
    const events = await runEvents(store, SESSION, RUN);
    const requested = events.filter((event) => event.type === "model.requested");
    const completed = events.filter((event) => event.type === "model.completed");
    expect(requested).toHaveLength(3);
    expect(completed).toHaveLength(3);
    expect(new Set(requested.map((event) => event.attemptId)).size).toBe(3);
    for (const event of completed) {
      const request = requested.find((candidate) => candidate.attemptId === event.attemptId);
      const text = (event.payload as { response: { generations: { text: string }[][] } }).response
        .generations[0]?.[0]?.text;
      const prompt = payloadOf<{ request: { messages: { data: { content: string } }[] } }>(request)
        .request.messages[0]?.data.content;
      expect(text).toBe(`echo ${prompt}`);
    }
  });

  it("records a text LLM call and a failed model call", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const llm = new FakeLLM({ response: "plain text" });
    expect(await llm.invoke("prompt", { callbacks: [handler] })).toBe("plain text");
    const failing = new ScriptedChatModel(() => {
      throw new Error("provider is down");
    });
    await expect(failing.invoke("x", { callbacks: [handler] })).rejects.toThrow("provider is down");
    const events = await runEvents(store, SESSION, RUN);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "model.requested",
      "model.failed",
    ]);
    expect(payloadOf<{ request: { prompts: string[] } }>(events[1]).request.prompts).toEqual([
      "prompt",
    ]);
    expect(JSON.stringify(events[4]?.payload)).toContain("provider is down");
  });

  it("fails closed: when model.requested cannot be committed the model is not called", async () => {
    const store = new FlakyStore();
    store.failing = true;
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const model = new ScriptedChatModel(() => new AIMessage("never"));
    const error = await model
      .invoke("hi", { callbacks: [handler] })
      .catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect(model.calls).toBe(0);
    // The store comes back: the same handler works again.
    store.failing = false;
    await model.invoke("hi", { callbacks: [handler] });
    expect(model.calls).toBe(1);
  });

  it("accepts an existing recorder", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({
      store,
      sessionId: SESSION,
      runId: "mine",
      actor: { type: "agent", id: "a" },
    });
    const handler = new LedgerCallbackHandler({ recorder });
    await new ScriptedChatModel(() => new AIMessage("ok")).invoke("x", { callbacks: [handler] });
    expect((await runEvents(store, SESSION, "mine")).map((event) => event.type)).toContain(
      "model.completed",
    );
    expect(await handler.getRecorder()).toBe(recorder);
  });
});

describe("LedgerCallbackHandler: tools and chains", () => {
  const search = tool(async ({ query }: { query: string }) => `results for ${query}`, {
    name: "search",
    description: "search",
    schema: z.object({ query: z.string() }),
    metadata: { idempotent: true, effect: "read" },
  });

  it("on resume, a tool call is caused by the recorded completion that asked for it", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "two-completions.db");
    // Two completions before the crash: the first asked for call-a, the second for nothing.
    await crashInChild("callback-handler:two-completions", path);
    const store = await openLedger(path, onTestFinished);
    const before = await runEvents(store, SESSION, RUN);
    const [asked, last] = before.filter((event) => event.type === "model.completed");
    // A new process: a handler on the same run, which resumes it, then runs call-a.
    const resumed = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    await search.invoke(
      { id: "call-a", name: "search", args: { query: "a" }, type: "tool_call" },
      { callbacks: [resumed] },
    );
    const requested = (await runEvents(store, SESSION, RUN)).find(
      (event) => event.type === "tool.requested",
    );
    expect(asked?.eventId).not.toBe(last?.eventId);
    expect(requested?.causedByEventId).toBe(asked?.eventId);
  });

  it("records tool calls with toolCallId, caused by the completion that asked for them", async () => {
    const { store, handler, model } = setup(() => searches(["call-a", "a"], ["call-b", "b"]));
    const answer = await model.invoke("find", { callbacks: [handler] });
    const results = await Promise.all(
      (answer.tool_calls ?? []).map((call) =>
        search.invoke({ ...call, type: "tool_call" }, { callbacks: [handler] }),
      ),
    );
    expect(results.map((result) => result.content)).toEqual(["results for a", "results for b"]);
    const events = await runEvents(store, SESSION, RUN);
    const completion = events.find((event) => event.type === "model.completed");
    const requested = events.filter((event) => event.type === "tool.requested");
    expect(
      requested.map((event) => (event.payload as { toolCallId: string }).toolCallId).sort(),
    ).toEqual(["call-a", "call-b"]);
    for (const event of requested) {
      expect(event.causedByEventId).toBe(completion?.eventId);
      expect((event.payload as { effect: unknown }).effect).toEqual({
        kind: "read",
        idempotent: true,
      });
      expect((event.payload as { name: string }).name).toBe("search");
    }
    expect(events.filter((event) => event.type === "tool.completed")).toHaveLength(2);

    // Ask a third tool call but never run it: restoreMessages reports the ones without result.
    const restored = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(restored.messages.map((message) => message.type)).toEqual([
      "human",
      "ai",
      "tool",
      "tool",
    ]);
    expect(restored.pendingToolCalls).toEqual([]);
  });

  it("restoreMessages lists tool calls that have no recorded result", async () => {
    const { store, handler, model } = setup(() => searches(["call-a", "a"], ["call-b", "b"]));
    const answer = await model.invoke([new HumanMessage("find")], { callbacks: [handler] });
    const first = answer.tool_calls?.[0];
    await search.invoke(
      { ...(first as { id: string; name: string; args: { query: string } }), type: "tool_call" },
      { callbacks: [handler] },
    );
    const restored = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(restored.messages.map((message) => message.type)).toEqual(["human", "ai", "tool"]);
    expect(restored.messages[2]?.content).toBe("results for a");
    expect(restored.pendingToolCalls.map((call) => call.id)).toEqual(["call-b"]);
  });

  it("restoreMessages pairs tool calls with an empty id with their results, by name and order", async () => {
    const { store, handler, model } = setup(() => searches(["", "a"], ["", "b"]));
    const answer = await model.invoke([new HumanMessage("find")], { callbacks: [handler] });
    const [first] = answer.tool_calls ?? [];
    if (!first) throw new Error("expected a tool call");
    await search.invoke({ ...first, type: "tool_call" }, { callbacks: [handler] });
    const restored = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(restored.messages.map((item) => item.type)).toEqual(["human", "ai", "tool"]);
    expect(restored.messages[2]?.content).toBe("results for a");
    expect(restored.pendingToolCalls.map((call) => call.args)).toEqual([{ query: "b" }]);
  });

  it("restoreMessages keeps a tool call that paused at a LangGraph interrupt() pending", async () => {
    const { store, handler, model } = setup(() => searches(["call-a", "a"]));
    await model.invoke([new HumanMessage("find")], { callbacks: [handler] });
    const paused = tool(
      async () => {
        throw new GraphInterrupt([{ id: "question", value: "search for a?" }]);
      },
      { name: "search", description: "search", schema: z.object({ query: z.string() }) },
    );
    await expect(
      paused.invoke(
        { id: "call-a", name: "search", args: { query: "a" }, type: "tool_call" },
        { callbacks: [handler] },
      ),
    ).rejects.toThrow();
    const events = await runEvents(store, SESSION, RUN);
    expect(events.at(-1)?.type).toBe("tool.failed");
    const restored = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(restored.messages.map((message) => message.type)).toEqual(["human", "ai"]);
    expect(restored.pendingToolCalls.map((call) => call.id)).toEqual(["call-a"]);
  });

  it("records nested chains with LangChain's runId/parentRunId in metadata", async () => {
    const { store, handler, model } = setup();
    const inner = RunnableLambda.from(
      async (text: string, config) => (await model.invoke(text, config)).content,
    ).withConfig({ runName: "inner" });
    const outer = RunnableSequence.from([
      RunnableLambda.from((input: { q: string }) => input.q),
      inner,
    ]).withConfig({ runName: "outer" });
    expect(await outer.invoke({ q: "nested?" }, { callbacks: [handler] })).toBe("answer 1");
    const events = await runEvents(store, SESSION, RUN);
    const started = events.filter((event) => event.type === "x.langchain.chain.started");
    const byName = new Map(
      started.map((event) => [(event.payload as { name: string }).name, event]),
    );
    const outerEvent = byName.get("outer");
    const innerEvent = byName.get("inner");
    expect(outerEvent).toBeDefined();
    expect(payloadOf<{ inputs: unknown }>(outerEvent).inputs).toEqual({ q: "nested?" });
    const meta = (event: unknown) =>
      (event as { metadata: { langchain: { runId: string; parentRunId?: string } } }).metadata
        .langchain;
    expect(meta(outerEvent).parentRunId).toBeUndefined();
    expect(meta(innerEvent).parentRunId).toBe(meta(outerEvent).runId);
    const modelRequested = events.find((event) => event.type === "model.requested");
    expect(meta(modelRequested).parentRunId).toBe(meta(innerEvent).runId);
    const ended = events.filter((event) => event.type === "x.langchain.chain.completed");
    expect(ended.length).toBe(started.length);
    const outerEnd = ended.find(
      (event) => (event.payload as { chainRunId: string }).chainRunId === meta(outerEvent).runId,
    );
    expect(payloadOf<{ outputs: unknown }>(outerEnd).outputs).toEqual({ output: "answer 1" });
  });
});
