import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "idless-session";
export const RUN = "idless-run";
export const THREAD = "thread-1";

/** One turn: two `look` calls with empty ids (as some providers give), then their results. */
function lookTwice(messages: BaseMessage[]): AIMessage {
  const results = messages.filter((message) => ToolMessage.isInstance(message));
  if (results.length > 0)
    return new AIMessage(results.map((message) => String(message.content)).join("|"));
  return new AIMessage({
    content: "",
    tool_calls: [
      { id: "", name: "look", args: { key: "a" } },
      { id: "", name: "look", args: { key: "b" } },
    ],
  });
}

/**
 * The agent with `look` (an idempotent read): `looked` lists each key it read; `crashAtB`: the
 * process dies inside the read of b, once a's has finished (and LangGraph saved its write).
 */
export function lookAgent(
  store: EventStore,
  options: { crashAtB?: boolean; note?: (key: string) => void } = {},
) {
  const looked: string[] = [];
  const look = tool(
    async ({ key }: { key: string }) => {
      looked.push(key);
      options.note?.(`look:${key}`);
      if (key === "b") {
        await new Promise((resolve) => setTimeout(resolve, 200));
        if (options.crashAtB) await crashHere();
      }
      return `value ${key}`;
    },
    {
      name: "look",
      description: "read",
      schema: z.object({ key: z.string() }),
      metadata: { idempotent: true, effect: "read" },
    },
  );
  const built = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    tools: [look],
    answer: lookTwice,
  });
  return { ...built, looked };
}

export const idlessCallsCrashes = {
  /** The process dies inside the second id-less call of the turn, the first one finished. */
  "idless-calls:second-in-flight": async (store) => {
    const { agent, handler } = lookAgent(store, { crashAtB: true, note: noteEffect });
    await agent.invoke({ messages: [new HumanMessage("go")] }, threadConfig(handler, THREAD));
  },
} satisfies Record<string, CrashScenario>;
