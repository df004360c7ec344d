import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { createAgent, tool, toolStrategy } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashAfterCommit, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "structured-crash-session";
export const RUN = "structured-crash-run";
export const THREAD = "t1";

const Weather = z.object({ city: z.string(), temp: z.number() }).describe("The weather");

/** How the agent asks for its structured response, and whether ledgerMiddleware is in it. */
export type StructuredSetup = "toolStrategy" | "schema" | "toolStrategy-no-middleware";

/**
 * createAgent with `responseFormat` (`toolStrategy(Weather)`, or the bare schema, for which
 * createAgent picks a tool `extract-<n>`, n counting the calls of the process): its model asks
 * for get_weather, then answers with a call of the structured output's tool (call-2).
 * `onModelCall` runs as each call is paid for.
 */
export function weatherAgent(store: EventStore, setup: StructuredSetup, onModelCall?: () => void) {
  const getWeather = tool(async ({ city }: { city: string }) => `sunny 21 in ${city}`, {
    name: "get_weather",
    description: "The weather in a city",
    schema: z.object({ city: z.string() }),
    metadata: { idempotent: true },
  });
  const model: ScriptedChatModel = new ScriptedChatModel((messages: BaseMessage[]) => {
    onModelCall?.();
    if (messages.length === 1)
      return new AIMessage({
        content: "",
        tool_calls: [{ id: "call-1", name: "get_weather", args: { city: "Paris" } }],
      });
    const name = model.toolNames.find((bound) => bound !== "get_weather") ?? "unbound";
    return new AIMessage({
      content: "",
      tool_calls: [{ id: "call-2", name, args: { city: "Paris", temp: 21 } }],
    });
  });
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const agent = createAgent({
    model,
    tools: [getWeather],
    responseFormat: (setup === "schema" ? Weather : toolStrategy(Weather)) as never,
    middleware: setup === "toolStrategy-no-middleware" ? [] : [ledgerMiddleware({ handler })],
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  return {
    model,
    invoke: (start: boolean) =>
      agent.invoke(
        start ? { messages: [new HumanMessage("weather in paris?")] } : null,
        threadConfig(handler, THREAD),
      ),
  };
}

/** A model.completed whose answer asks for the structured output's call (call-2). */
const structuredAnswer = (event: { type: string; payload?: unknown }) =>
  event.type === "model.completed" && JSON.stringify(event.payload ?? null).includes('"call-2"');

export const structuredCrashes = {
  /**
   * A process that dies as the structured answer arrives: its model.completed is committed,
   * then the model node does not end (no structured response, no checkpoint of it).
   */
  "structured-answer": async (store, [setup = "toolStrategy"]) => {
    const crashing = crashAfterCommit(store, structuredAnswer);
    await weatherAgent(crashing, setup as StructuredSetup, () => noteEffect("model")).invoke(true);
  },
  /**
   * A process that dies with the structured answer's call in flight: the second model call's
   * `model.requested` is committed, the model is not called.
   */
  "structured-request": async (store, [setup = "toolStrategy"]) => {
    let requested = 0;
    const crashing = crashAfterCommit(
      store,
      (event) => event.type === "model.requested" && ++requested === 2,
    );
    await weatherAgent(crashing, setup as StructuredSetup, () => noteEffect("model")).invoke(true);
  },
} satisfies Record<string, CrashScenario>;
