import { appendFileSync } from "node:fs";
import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent, ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { type CrashScenario, crashAfterCommit, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "tool-node-session";
export const RUN = "tool-node-run";

/**
 * A plain graph with LangGraph's prebuilt ToolNode (what createReactAgent builds), recorded by
 * the callback alone (no middleware exists for it), and a `send` tool (not idempotent).
 * `sent`: the messages already out when this process starts (a crashed one sent them). With
 * `crashInSend`, the process dies inside send, once the message is out.
 */
export function world(store: EventStore, options: { sent?: number; crashInSend?: boolean } = {}) {
  const effects = { sent: options.sent ?? 0, modelAnswers: [] as string[] };
  const send = tool(
    async ({ to }: { to: string }) => {
      effects.sent++;
      if (options.crashInSend) {
        noteEffect("sent");
        return crashHere();
      }
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  const graph = (graphOptions: { handleToolErrors?: boolean }) => {
    const model = new ScriptedChatModel((messages: BaseMessage[]) => {
      const result = messages.findLast((message) => ToolMessage.isInstance(message));
      if (!result)
        return new AIMessage({
          content: "",
          tool_calls: [{ id: "call-send", name: "send", args: { to: "bob" } }],
        });
      effects.modelAnswers.push(String(result.content));
      return new AIMessage("done");
    });
    return new StateGraph(MessagesAnnotation)
      .addNode("agent", async (state, config: RunnableConfig) => ({
        messages: [await model.invoke(state.messages, config)],
      }))
      .addNode("tools", new ToolNode([send], graphOptions))
      .addEdge(START, "agent")
      .addConditionalEdges("agent", (state) =>
        (state.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : END,
      )
      .addEdge("tools", "agent")
      .compile({ checkpointer: new LedgerCheckpointSaver({ store }) });
  };
  return { effects, graph };
}

/**
 * createReactAgent with a ToolNode that stops on errors, and a model that asks in one turn for
 * `send_email` (not idempotent) and `get_weather` (idempotent). Each run of a tool is a line in
 * its log (`emails`, `weather`). With `crashInWeather`, get_weather never returns (the process
 * dies inside it) and send_email returns once get_weather has started.
 * `modelSaw`: the tool results the model was given, as `name: content`.
 */
export function parallelWorld(
  store: EventStore,
  logs: { emails: string; weather: string },
  options: { crashInWeather?: boolean } = {},
) {
  const modelSaw: string[] = [];
  let weatherStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => {
    weatherStarted = resolve;
  });
  const sendEmail = tool(
    async ({ to }: { to: string }) => {
      appendFileSync(logs.emails, `${to}\n`);
      if (options.crashInWeather) await started;
      return `sent to ${to}`;
    },
    { name: "send_email", description: "write", schema: z.object({ to: z.string() }) },
  );
  const getWeather = tool(
    async ({ city }: { city: string }) => {
      appendFileSync(logs.weather, `${city}\n`);
      if (options.crashInWeather) {
        weatherStarted();
        return new Promise<never>(() => {});
      }
      return `sunny in ${city}`;
    },
    {
      name: "get_weather",
      description: "read",
      schema: z.object({ city: z.string() }),
      metadata: { idempotent: true },
    },
  );
  const decide = (messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length === 0)
      return new AIMessage({
        content: "",
        tool_calls: [
          { id: "call-email", name: "send_email", args: { to: "bob" } },
          { id: "call-weather", name: "get_weather", args: { city: "Paris" } },
        ],
      });
    for (const result of results) modelSaw.push(`${result.name}: ${String(result.content)}`);
    return new AIMessage(`Done. ${results.map((result) => String(result.content)).join("; ")}`);
  };
  const model = fakeModel();
  for (let call = 0; call < 3; call++) model.respond(decide);
  const graph = createReactAgent({
    llm: model,
    tools: new ToolNode([sendEmail, getWeather], { handleToolErrors: false }),
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  return { graph, modelSaw };
}

export const toolNodeCrashes = {
  /** The first process: it dies inside `send`, once the message is out. */
  "tool-node:crash-in-send": async (store) => {
    const run = world(store, { crashInSend: true });
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    await run
      .graph({ handleToolErrors: false })
      .invoke({ messages: [new HumanMessage("email bob")] }, threadConfig(handler));
  },
  /** createReactAgent; it dies inside get_weather, once send_email is done. Args: the logs. */
  "tool-node:parallel-turn": async (store, [emails, weather]) => {
    // It dies once send_email's completion is in the ledger, get_weather still running.
    const crashing = crashAfterCommit(
      store,
      (event) =>
        event.type === "tool.completed" &&
        (event.payload as { toolCallId?: string }).toolCallId === "call-email",
    );
    const handler = new LedgerCallbackHandler({ store: crashing, sessionId: SESSION, runId: RUN });
    const logs = { emails: String(emails), weather: String(weather) };
    await parallelWorld(crashing, logs, { crashInWeather: true }).graph.invoke(
      { messages: [new HumanMessage("email bob, and the weather?")] },
      threadConfig(handler),
    );
  },
} satisfies Record<string, CrashScenario>;
