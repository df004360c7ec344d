import { join } from "node:path";
import type { EventStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import {
  AIMessage,
  AIMessageChunk,
  type BaseMessage,
  HumanMessage,
} from "@langchain/core/messages";
import { type Runnable, type RunnableConfig, RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { z } from "zod";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { LedgerCheckpointSaver } from "./checkpoint-saver.js";
import { restoreMessages } from "./restore-messages.js";
import { openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents, threadConfig } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const scratch = scratchDirectory("langchain-structured-", { beforeAll, afterAll });
const SESSION = "structured-session";
const RUN = "structured-run";
const address = { sessionId: SESSION, runId: RUN };
const THREAD = "t1";

const asksCharge = () =>
  new AIMessage({
    content: "",
    tool_calls: [{ id: "call-1", name: "charge", args: { amount: 1 } }],
  });

/**
 * `withStructuredOutput(schema, { name: "Verdict" })` as ChatOpenAI and ChatAnthropic build it
 * (functionCalling): the schema bound as the only tool, that tool forced, and
 * `ls_structured_output_format` in the call options; the answer is the tool call's arguments.
 */
function verdictClassifier() {
  const model = new ScriptedChatModel(
    () =>
      new AIMessage({
        content: "",
        tool_calls: [{ id: "so-1", name: "Verdict", args: { ok: true } }],
      }),
  );
  const schema = toJsonSchema(z.object({ ok: z.boolean() }));
  return (model.bindTools([{ name: "Verdict" }]) as ScriptedChatModel)
    .withConfig({
      tool_choice: { type: "function", function: { name: "Verdict" } },
      ls_structured_output_format: { kwargs: { method: "functionCalling" }, schema },
    })
    .pipe(RunnableLambda.from((message: AIMessage) => message.tool_calls?.[0]?.args ?? {}));
}

type Classifier = Pick<ReturnType<typeof verdictClassifier>, "invoke">;

/**
 * LangChain's own `withStructuredOutput` (BaseChatModel's, which FakeStreamingChatModel does not
 * override): the schema bound as a tool named `Verdict`, and no `ls_structured_output_format`.
 * Its parser takes the streamed message, so the classifier streams. `includeRaw` and `runName`
 * (`.withConfig({ runName })`, which replaces the pipeline's own name) as you would give them.
 */
function baseClassifier(options: { includeRaw?: boolean; runName?: string } = {}): Classifier {
  const model = new FakeStreamingChatModel({
    chunks: [
      new AIMessageChunk({
        content: "",
        tool_calls: [{ id: "so-1", name: "Verdict", args: { ok: true } }],
      }),
    ],
  });
  const schema = z.object({ ok: z.boolean() });
  const base: Runnable<BaseMessage[], unknown> = options.includeRaw
    ? model.withStructuredOutput(schema, { name: "Verdict", includeRaw: true })
    : model.withStructuredOutput(schema, { name: "Verdict" });
  const { runName } = options;
  const structured = runName === undefined ? base : base.withConfig({ runName });
  return {
    invoke: async (messages: BaseMessage[], config?: RunnableConfig) => {
      let verdict: unknown;
      for await (const value of await structured.stream(messages, config)) verdict = value;
      return verdict as Record<string, unknown>;
    },
  };
}

/**
 * A graph recorded by the handler in thread t1: `agent` (if given) asks for charge 1, then
 * `classify` calls the structured-output classifier; the graph ends there (the charge is never
 * made: a turn stopped before its tools).
 */
async function record(
  name: string,
  onTestFinished: TestContext["onTestFinished"],
  agent?: (messages: BaseMessage[], config: RunnableConfig) => Promise<AIMessage>,
  classifier: Classifier = verdictClassifier(),
): Promise<EventStore> {
  const store = await openLedger(join(scratch, `${name}.db`), onTestFinished);
  const handler = new LedgerCallbackHandler({ store, ...address });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (state, config: RunnableConfig) => ({
      messages: agent ? [await agent(state.messages, config)] : [],
    }))
    .addNode("classify", async (state, config: RunnableConfig) => {
      const verdict = await classifier.invoke(state.messages, config);
      return { messages: [new AIMessage(`verdict: ${JSON.stringify(verdict)}`)] };
    })
    .addEdge(START, "agent")
    .addEdge("agent", "classify")
    .addEdge("classify", END)
    .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
  await graph.invoke({ messages: [new HumanMessage("is it ok?")] }, threadConfig(handler, THREAD));
  return store;
}

/** The agent's own turn restored: its `charge` call pending, the classifier's answered. */
function expectAgentTurnPending(restored: Awaited<ReturnType<typeof restoreMessages>>) {
  expect(restored.pendingToolCalls.map((call) => `${call.name}(${call.id})`)).toEqual([
    "charge(call-1)",
  ]);
  expect(restored.messages.map((message) => [message.type, message.content])).toEqual([
    ["human", "is it ok?"],
    ["ai", ""],
  ]);
}

async function modelRequests(store: EventStore) {
  return (await runEvents(store, SESSION, RUN))
    .filter((event) => event.type === "model.requested")
    .map((event) => (event.payload as { request: { structuredOutput?: unknown } }).request);
}

describe("restoreMessages and a structured output given as a tool call (withStructuredOutput)", () => {
  it("records how the call asked for structured output, from LangChain's call options", async ({
    onTestFinished,
  }) => {
    const store = await record("recorded", onTestFinished);
    const [request] = await modelRequests(store);
    expect(request?.structuredOutput).toEqual({ method: "functionCalling" });
  });

  it("a classifier's structured answer is no pending tool call (no tool by its name will run)", async ({
    onTestFinished,
  }) => {
    const store = await record("classifier-only", onTestFinished);
    const restored = await restoreMessages(store, address, { threadId: THREAD });
    expect(restored.pendingToolCalls).toEqual([]);
    expect(restored.toolMessages).toEqual([]);
  });

  it("after the agent's turn, the turn stays the agent's: its own calls are pending, not the classifier's", async ({
    onTestFinished,
  }) => {
    const model = new ScriptedChatModel(asksCharge);
    const store = await record("after-turn", onTestFinished, (messages, config) =>
      model.invoke(messages, config),
    );
    const restored = await restoreMessages(store, address, { threadId: THREAD });
    expectAgentTurnPending(restored);
  });

  it("LangChain's base withStructuredOutput (no ls_structured_output_format): known by its StructuredOutput chain", async ({
    onTestFinished,
  }) => {
    const model = new ScriptedChatModel(asksCharge);
    const store = await record(
      "base-structured-output",
      onTestFinished,
      (messages, config) => model.invoke(messages, config),
      baseClassifier(),
    );
    const restored = await restoreMessages(store, address, { threadId: THREAD });
    expectAgentTurnPending(restored);
  });

  it.for([
    { case: "renamed", options: { runName: "classify-verdict" } },
    {
      case: "renamed, with includeRaw",
      options: { runName: "classify-verdict", includeRaw: true },
    },
    { case: "with includeRaw", options: { includeRaw: true } },
  ])(
    "the base withStructuredOutput $case: known by its pipeline's shape (LangChain names it no other way)",
    async ({ options }, { onTestFinished }) => {
      const model = new ScriptedChatModel(asksCharge);
      const store = await record(
        `base-structured-output-${options.runName ?? "plain"}-${options.includeRaw === true}`,
        onTestFinished,
        (messages, config) => model.invoke(messages, config),
        baseClassifier(options),
      );
      const classifierCall = (await runEvents(store, SESSION, RUN)).filter(
        (event) => event.type === "model.requested",
      )[1];
      expect(classifierCall?.metadata?.structuredOutput).toEqual({ method: "functionCalling" });
      const restored = await restoreMessages(store, address, { threadId: THREAD });
      expectAgentTurnPending(restored);
    },
  );

  it("a chain of your own of a model bound to one tool and a function, unnamed, stays a turn", async ({
    onTestFinished,
  }) => {
    const model = new FakeStreamingChatModel({ chunks: [new AIMessageChunk(asksCharge())] });
    const charge = tool(async () => "charged", {
      name: "charge",
      schema: z.object({ amount: z.number() }),
    });
    const chain = model
      .bindTools([charge])
      .pipe(RunnableLambda.from((message: AIMessageChunk) => message));
    const store = await record("own-chain-turn", onTestFinished, async (messages, config) => {
      let message: AIMessageChunk | undefined;
      for await (const chunk of await chain.stream(messages, config))
        message = message === undefined ? chunk : message.concat(chunk);
      return new AIMessage({ content: "", tool_calls: message?.tool_calls ?? [] });
    });
    const [agentCall] = (await runEvents(store, SESSION, RUN)).filter(
      (event) => event.type === "model.requested",
    );
    expect(agentCall?.metadata?.structuredOutput).toBeUndefined();
    const restored = await restoreMessages(store, address, { threadId: THREAD });
    expect(restored.pendingToolCalls.map((call) => `${call.name}(${call.id})`)).toEqual([
      "charge(call-1)",
    ]);
  });

  it("a structured output in the answer's content (json_schema, as createAgent's responseFormat asks) leaves the call a turn", async ({
    onTestFinished,
  }) => {
    const model = new ScriptedChatModel(asksCharge);
    const agent = model.withConfig({
      ls_structured_output_format: { kwargs: { method: "json_schema" }, schema: {} },
    });
    const store = await record("json-schema-turn", onTestFinished, (messages, config) =>
      agent.invoke(messages, config),
    );
    const [request] = await modelRequests(store);
    expect(request?.structuredOutput).toEqual({ method: "json_schema" });
    const restored = await restoreMessages(store, address, { threadId: THREAD });
    expect(restored.pendingToolCalls.map((call) => call.id)).toEqual(["call-1"]);
  });
});
