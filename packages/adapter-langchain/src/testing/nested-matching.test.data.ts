import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "nested-matching-session";
export const RUN = "nested-matching-run";
/** Two LangGraph threads on one handler, whose models give the same tool call id. */
export const FIRST = "thread-a";
export const SECOND = "thread-b";

/** A user message: its text is the order `checkout` is asked for. */
export function ask(order: string) {
  return { messages: [new HumanMessage(order)] };
}

// Each turn (a user message): checkout of the user's order, always as "call_1" (a fake model's
// id, or some provider's); then the answer, from its result.
function script(messages: BaseMessage[]) {
  const last = messages.findLastIndex((message) => HumanMessage.isInstance(message));
  const order = String(messages[last]?.content);
  const results = messages.slice(last).filter((message) => ToolMessage.isInstance(message));
  if (results.length === 0)
    return new AIMessage({
      content: "",
      tool_calls: [{ id: "call_1", name: "checkout", args: { order } }],
    });
  return new AIMessage(`${order}: ${results.map((message) => message.content).join(" | ")}`);
}

/** Where a crashed process stops inside `checkout`. */
export type CheckoutCrash = "before-charge" | "after-charge";

/**
 * One process's tools: `checkout` (idempotent) calls `charge` (not idempotent: a payment, the
 * same amount for every order) with its own config, as tools do. `crash`: the orders for which
 * checkout stops the process, and where. `note` hears of each charge (`charge:<order>`).
 */
export function shop(
  options: { crash?: Map<string, CheckoutCrash>; note?: (effect: string) => void } = {},
) {
  const charged: string[] = [];
  // The order checkout is charging for: charge's arguments do not say (the same every time).
  let charging = "";
  const charge = tool(
    async ({ amount }: { amount: number }) => {
      charged.push(charging);
      options.note?.(`charge:${charging}`);
      return `charged ${amount}`;
    },
    { name: "charge", description: "pay", schema: z.object({ amount: z.number() }) },
  );
  const checkout = tool(
    async ({ order }: { order: string }, config) => {
      const crash = options.crash?.get(order);
      if (crash === "before-charge") await crashHere();
      charging = order;
      const receipt = await charge.invoke({ amount: 10 }, config);
      if (crash === "after-charge") await crashHere();
      // A ToolMessage: LangChain hands charge checkout's tool call with the config.
      const text: unknown = (receipt as { content?: unknown }).content ?? receipt;
      return `checked out ${order} (${String(text)})`;
    },
    {
      name: "checkout",
      description: "order",
      schema: z.object({ order: z.string() }),
      metadata: { idempotent: true, effect: "write" },
    },
  );
  return { charged, tools: [checkout, charge] };
}

/** One process's agent: one handler for every thread, the middleware and the saver. */
export function shopAgent(store: EventStore, tools: ReturnType<typeof shop>["tools"]) {
  return ledgerAgent({ store, sessionId: SESSION, runId: RUN, tools, answer: script });
}

export const nestedMatchingCrashes = {
  /** Thread A: the process dies inside checkout, once charge has completed. */
  "nested-matching:first-after-charge": async (store) => {
    const { tools } = shop({ crash: new Map([[FIRST, "after-charge"]]), note: noteEffect });
    const { agent, handler } = shopAgent(store, tools);
    await agent.invoke(ask(FIRST), threadConfig(handler, FIRST));
  },
  /** Thread B (same run, another process): the process dies inside checkout, before charge. */
  "nested-matching:second-before-charge": async (store) => {
    const { tools } = shop({ crash: new Map([[SECOND, "before-charge"]]), note: noteEffect });
    const { agent, handler } = shopAgent(store, tools);
    await agent.invoke(ask(SECOND), threadConfig(handler, SECOND));
  },
  /**
   * One thread, two turns: the first checks out `first` (charge and all); the second asks for
   * `second` with the same tool call id, and the process dies in its checkout before charge.
   */
  "nested-matching:second-turn-before-charge": async (store) => {
    const { tools } = shop({ crash: new Map([["second", "before-charge"]]), note: noteEffect });
    const { agent, handler } = shopAgent(store, tools);
    await agent.invoke(ask("first"), threadConfig(handler, FIRST));
    await agent.invoke(ask("second"), threadConfig(handler, FIRST));
  },
} satisfies Record<string, CrashScenario>;
