import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "other-run-session";
export const RUN = "other-run-run";
/** The run a later task on the same thread is recorded under. */
export const NEXT_RUN = "other-run-next";
export const THREAD = "thread-1";

/** A user message: the text is who `send` writes to. */
export function ask(to: string) {
  return { messages: [new HumanMessage(to)] };
}

/**
 * Each turn (a user message), one `send` to the user's addressee, with the tool call id `id`
 * ("" for a model that gives empty ids); then the answer, from its result.
 */
function askToSend(id: string) {
  return (messages: BaseMessage[]) => {
    const last = messages.findLastIndex((message) => HumanMessage.isInstance(message));
    const results = messages.slice(last).filter((message) => ToolMessage.isInstance(message));
    if (results.length === 0)
      return new AIMessage({
        content: "",
        tool_calls: [{ id, name: "send", args: { to: String(messages[last]?.content) } }],
      });
    return new AIMessage(`done: ${results.map((message) => message.content).join(" | ")}`);
  };
}

/**
 * One process's `send` (not idempotent): `sent` lists whom it wrote to, `note` hears of each
 * (`send:<to>`). `crashFor`: the addressee for whom the process dies inside send, once sent.
 */
export function mail(options: { crashFor?: string; note?: (effect: string) => void } = {}) {
  const sent: string[] = [];
  const send = tool(
    async ({ to }: { to: string }) => {
      sent.push(to);
      options.note?.(`send:${to}`);
      if (to === options.crashFor) await crashHere();
      return `sent to ${to}`;
    },
    { name: "send", description: "write", schema: z.object({ to: z.string() }) },
  );
  return { sent, tools: [send] };
}

/** One process's agent on `runId`, its model giving the tool call id `id`. */
export function mailAgent(
  store: EventStore,
  options: { runId: string; id: string; tools: ReturnType<typeof mail>["tools"] },
) {
  return ledgerAgent({
    store,
    sessionId: SESSION,
    runId: options.runId,
    tools: options.tools,
    answer: askToSend(options.id),
  });
}

export const otherRunCallsCrashes = {
  /** The process dies inside send to bob (tool call id: the argument, "" for none). */
  "other-run-calls:send-in-flight": async (store, [id = ""]) => {
    const { tools } = mail({ crashFor: "bob", note: noteEffect });
    const { agent, handler } = mailAgent(store, { runId: RUN, id, tools });
    await agent.invoke(ask("bob"), threadConfig(handler, THREAD));
  },
  /**
   * Turn 1 of the thread is recorded under RUN (send to the first addressee, done); turn 2,
   * a new task on the old thread, under NEXT_RUN, with the same tool call id `call_1`: the
   * process dies inside its send to the second addressee (the arguments: the two addressees).
   */
  "other-run-calls:next-run-in-flight": async (store, [first = "bob", second = "bob"]) => {
    const before = mail({ note: noteEffect });
    const earlier = mailAgent(store, { runId: RUN, id: "call_1", tools: before.tools });
    await earlier.agent.invoke(ask(first), threadConfig(earlier.handler, THREAD));
    const { tools } = mail({ crashFor: second, note: noteEffect });
    const later = mailAgent(store, { runId: NEXT_RUN, id: "call_1", tools });
    await later.agent.invoke(ask(second), threadConfig(later.handler, THREAD));
  },
} satisfies Record<string, CrashScenario>;
