import { MemoryEventStore, readWholeRun } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, interrupt, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createAgent, createMiddleware, tool, toolStrategy } from "langchain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { restoreMessages } from "./restore-messages.js";
import { STRUCTURED_RESPONSE_EVENT } from "./structured-output-calls.js";
import { threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const address = { sessionId: "s1", runId: "run-1" };
const Weather = z.object({ city: z.string(), temp: z.number() }).describe("The weather");

const getWeather = tool(async ({ city }: { city: string }) => `sunny 21 in ${city}`, {
  name: "get_weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

/**
 * Asks for the weather, then answers with the structured output's tool (`structured`; by
 * default the one createAgent bound beside get_weather, whose name it picks for a bare schema).
 */
function weatherModel(structured?: string) {
  const model: ScriptedChatModel = new ScriptedChatModel((messages: BaseMessage[]) =>
    weatherAnswer(messages, structured, model),
  );
  return model;
}

/** weatherModel's answers: get_weather, then the structured output's tool. */
function weatherAnswer(
  messages: BaseMessage[],
  structured: string | undefined,
  model: ScriptedChatModel,
) {
  const name = structured ?? model.toolNames.find((bound) => bound !== "get_weather") ?? "unbound";
  if (messages.length === 1)
    return new AIMessage({
      content: "",
      tool_calls: [{ id: "call-1", name: "get_weather", args: { city: "Paris" } }],
    });
  return new AIMessage({
    content: "",
    tool_calls: [{ id: "call-2", name, args: { city: "Paris", temp: 21 } }],
  });
}

/** A model whose invocation params do not show the tools it binds. */
class QuietModel extends ScriptedChatModel {
  override invocationParams(): Record<string, unknown> {
    const { tools: _bound, ...params } = super.invocationParams();
    return params;
  }
}

/**
 * createAgent with `responseFormat`, with or without ledgerMiddleware, run to its structured
 * answer: restoreMessages then has no pending call and the answer as the last turn. With
 * `subgraph`, the agent is invoked from a node of a graph: its calls, and so the turn restored,
 * are in its child run.
 */
async function expectAnsweredByAgent(options: {
  /** `toolStrategy(schema)`, or a bare schema. */
  responseFormat: unknown;
  middleware: boolean;
  /** A model whose invocation params do not show its tools. */
  quiet?: boolean;
  subgraph?: boolean;
}) {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, ...address });
  const quiet: QuietModel = new QuietModel((messages) => weatherAnswer(messages, undefined, quiet));
  const checkpointer = new LedgerCheckpointSaver({ store });
  const agent = createAgent({
    model: options.quiet ? quiet : weatherModel(),
    tools: [getWeather],
    responseFormat: options.responseFormat as never,
    middleware: options.middleware ? [ledgerMiddleware({ handler })] : [],
    ...(options.subgraph ? {} : { checkpointer }),
  });
  const input = { messages: [new HumanMessage("weather in paris?")] };
  let structuredResponse: unknown;
  if (options.subgraph) {
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("weather", async (state, config: RunnableConfig) => {
        const result = await agent.invoke({ messages: state.messages }, config);
        structuredResponse = result.structuredResponse;
        return { messages: result.messages.slice(-1) };
      })
      .addEdge(START, "weather")
      .addEdge("weather", END)
      .compile({ checkpointer });
    await graph.invoke(input, threadConfig(handler, "t1"));
  } else ({ structuredResponse } = await agent.invoke(input, threadConfig(handler, "t1")));
  expect(structuredResponse).toEqual({ city: "Paris", temp: 21 });
  const runs = await store.listRuns(address.sessionId);
  const child = runs.find((run) => run.parentRunId === address.runId);
  if (options.subgraph && child === undefined) throw new Error("expected the agent's child run");
  const agentRun = options.subgraph ? { ...address, runId: child?.runId ?? "" } : address;
  const restored = await restoreMessages(store, agentRun, { threadId: "t1" });
  expect(restored.pendingToolCalls).toEqual([]);
  expect(restored.toolMessages.map((message) => message.tool_call_id)).toEqual([]);
  const last = restored.messages.at(-1) as AIMessage;
  expect(last.tool_calls?.map((call) => call.id)).toEqual(["call-2"]);
  expect(restored.messages.map((message) => message.type)).toEqual(["human", "ai", "tool", "ai"]);
  // With ledgerMiddleware the model call's metadata names the answer's tool before the call:
  // no event after it says so again. Without, the end of the model node is where it is known.
  const notes = async (run: typeof address) =>
    (await readWholeRun(store, run)).filter((event) => event.type === STRUCTURED_RESPONSE_EVENT);
  // In the run of the model call it notes, caused by its completion.
  const noted = await notes(agentRun);
  expect(noted).toHaveLength(options.middleware ? 0 : 1);
  const completions = (await readWholeRun(store, agentRun)).filter(
    (event) => event.type === "model.completed",
  );
  if (noted[0]) expect(noted[0].causedByEventId).toBe(completions.at(-1)?.eventId);
  if (options.subgraph) expect(await notes(address)).toEqual([]);
  return store;
}

describe("createAgent's responseFormat: toolStrategy, answered as a tool call", () => {
  it("the structured answer is no pending tool call: the agent answers it, no tool node runs it", async () => {
    // The answer stays the turn's: a resumed loop has it, and asks the model nothing more.
    await expectAnsweredByAgent({ responseFormat: toolStrategy(Weather), middleware: true });
  });

  it("without ledgerMiddleware: the structured answer is no pending tool call either", async () => {
    await expectAnsweredByAgent({ responseFormat: toolStrategy(Weather), middleware: false });
  });

  it("a bare schema (createAgent picks toolStrategy and its tool's name at each call), with ledgerMiddleware", async () => {
    await expectAnsweredByAgent({ responseFormat: Weather, middleware: true });
  });

  it("a bare schema with a title (createAgent names its tool after it), with ledgerMiddleware", async () => {
    await expectAnsweredByAgent({
      responseFormat: Weather.meta({ title: "WeatherReport" }),
      middleware: true,
    });
  });

  it("a bare schema, with ledgerMiddleware, and a model that does not show what it binds: any tool named extract-<n>", async () => {
    const store = await expectAnsweredByAgent({
      responseFormat: Weather,
      middleware: true,
      quiet: true,
    });
    const noted = (await readWholeRun(store, address))
      .filter((event) => event.type === "model.requested")
      .map((event) => event.metadata?.structuredOutput);
    expect(noted).toEqual([
      { method: "toolStrategy", tools: [], generated: true },
      { method: "toolStrategy", tools: [], generated: true },
    ]);
  });

  it("a bare schema, without ledgerMiddleware", async () => {
    await expectAnsweredByAgent({ responseFormat: Weather, middleware: false });
  });

  it.for([
    { format: "toolStrategy", middleware: false },
    { format: "bare schema", middleware: false },
    { format: "toolStrategy", middleware: true },
  ])(
    "a createAgent subgraph ($format, ledgerMiddleware: $middleware): its child run restores as a top-level agent's run, the note in it",
    async ({ format, middleware }) => {
      await expectAnsweredByAgent({
        responseFormat: format === "toolStrategy" ? toolStrategy(Weather) : Weather,
        middleware,
        subgraph: true,
      });
    },
  );

  it("a call of the agent's own tools stays pending", async () => {
    const store = new MemoryEventStore();
    const handler = new LedgerCallbackHandler({ store, ...address });
    // The tool pauses for a person: the graph stops with its call not done.
    const askFirst = tool(async () => interrupt("go ahead?"), {
      name: "get_weather",
      description: "The weather in a city, once a person agrees",
      schema: z.object({ city: z.string() }),
    });
    const responseFormat = toolStrategy(Weather);
    const agent = createAgent({
      model: weatherModel(responseFormat[0]?.name ?? "extract"),
      tools: [askFirst],
      responseFormat,
      middleware: [ledgerMiddleware({ handler })],
      checkpointer: new LedgerCheckpointSaver({ store }),
    });
    await agent.invoke(
      { messages: [new HumanMessage("weather in paris?")] },
      threadConfig(handler, "t1"),
    );
    const restored = await restoreMessages(store, address, { threadId: "t1" });
    expect(restored.pendingToolCalls.map((call) => call.name)).toEqual(["get_weather"]);
  });

  it.for([
    ["after ledgerMiddleware", "inner"],
    ["before ledgerMiddleware", "outer"],
  ] as const)(
    "a bare schema: a tool another middleware adds to the call (%s) is the agent's, its call stays pending",
    async ([, place]) => {
      const store = new MemoryEventStore();
      const handler = new LedgerCallbackHandler({ store, ...address });
      // The added tool pauses for a person: the graph stops with its call not done.
      const lookup = tool(async () => interrupt("go ahead?"), {
        name: "lookup",
        description: "Looks a city up, once a person agrees",
        schema: z.object({ city: z.string() }),
      });
      const addsLookup = createMiddleware({
        name: "AddsLookup",
        wrapModelCall: (request, next) => next({ ...request, tools: [...request.tools, lookup] }),
        wrapToolCall: (request, next) =>
          request.toolCall.name === "lookup"
            ? lookup.invoke({ ...request.toolCall, type: "tool_call" })
            : next(request),
      });
      const model = new ScriptedChatModel(
        () =>
          new AIMessage({
            content: "",
            tool_calls: [{ id: "call-1", name: "lookup", args: { city: "Paris" } }],
          }),
      );
      const middleware =
        place === "inner"
          ? [ledgerMiddleware({ handler }), addsLookup]
          : [addsLookup, ledgerMiddleware({ handler })];
      const agent = createAgent({
        model,
        tools: [getWeather],
        responseFormat: Weather,
        middleware,
        checkpointer: new LedgerCheckpointSaver({ store }),
      });
      await agent.invoke(
        { messages: [new HumanMessage("weather in paris?")] },
        threadConfig(handler, "t1"),
      );
      expect(model.toolNames).toContain("lookup");
      const restored = await restoreMessages(store, address, { threadId: "t1" });
      expect(restored.pendingToolCalls.map((call) => call.name)).toEqual(["lookup"]);
    },
  );
});
