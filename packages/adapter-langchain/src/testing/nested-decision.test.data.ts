import { randomUUID } from "node:crypto";
import { appendFileSync } from "node:fs";
import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { fakeModel } from "@langchain/core/testing";
import { type StructuredTool, tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashHere } from "./crash-point.js";
import { threadConfig, toolGraph } from "./helpers.js";

export const SESSION = "s1";
export const RUN = "run-1";

/** Where the process dies: inside `charge` (once it charged), or in `checkout` after it. */
export type CrashAt = "in-charge" | "after-charge" | "none";

/**
 * How `checkout` reaches `charge`: calling it itself ("direct"), through `pay`, a tool between
 * the two ("deep"), or through a sub-agent whose model asks for it: createAgent with
 * ledgerMiddleware on the same handler ("sub-agent"), or without it, recorded by the handler's
 * callbacks alone ("callback-sub-agent", its tool node catching a tool's error as createAgent's
 * does by default), or with ledgerMiddleware and no checkpointer of its own, run again from its
 * start when checkout is ("stateless-sub-agent"). Two levels down: checkout runs a sub-agent
 * whose model asks for `pay` (idempotent), and pay runs a sub-agent of its own whose model asks
 * for `charge`, both without a checkpointer of their own, either recorded by the handler's
 * callbacks alone ("callback-sub-agents") or with ledgerMiddleware ("stateless-sub-agents").
 */
export type ChargePath =
  | "direct"
  | "deep"
  | "sub-agent"
  | "callback-sub-agent"
  | "stateless-sub-agent"
  | "callback-sub-agents"
  | "stateless-sub-agents";

/** The paths on which checkout reaches charge through two sub-agents, one inside the other. */
const TWO_LEVELS: readonly ChargePath[] = ["callback-sub-agents", "stateless-sub-agents"];

/** How a world is set up besides its crash and its path. */
export interface WorldOptions {
  /**
   * The sub-agent's model gives its call of `charge` a new id in each answer (`call_<uuid>`), as
   * real providers do, rather than the same "call-charge": called live again on resume, it then
   * asks for the recorded call under an id the ledger has never seen.
   */
  freshIds?: boolean;
  /**
   * `checkout` catches the error of the call it makes (a tool that handles its own failures)
   * and returns what it says, rather than throwing it on.
   */
  checkoutCatches?: boolean;
}

/** A sub-agent's model: asks for its tool `name` (`charge`), then says what it got. */
function subAgentModel({ freshIds = false }: WorldOptions, name: string) {
  const model = fakeModel();
  const decide = (messages: BaseMessage[]) => {
    const result = messages.find((message) => ToolMessage.isInstance(message));
    if (!result)
      return new AIMessage({
        content: "",
        tool_calls: [
          {
            id: freshIds ? `call_${randomUUID()}` : `call-${name}`,
            name,
            args: { amount: 5 },
          },
        ],
      });
    return new AIMessage(`paid: ${String(result.content)}`);
  };
  for (let call = 0; call < 4; call++) model.respond(decide);
  return model;
}

/**
 * One process's world: `checkout` (idempotent, unless `checkoutIdempotent` is false) charges
 * through `charge` (not idempotent), which it calls with its own config, as tools commonly call
 * tools. Each charge is a line in the log file `charges`. `modelSaw`: the ToolMessages the model
 * was given, as `name: content`.
 */
export function world(
  charges: string,
  crashAt: CrashAt = "none",
  path: ChargePath = "direct",
  checkoutIdempotent = true,
  handler?: LedgerCallbackHandler,
  options: WorldOptions = {},
) {
  const modelSaw: string[] = [];
  const charge = tool(
    async ({ amount }: { amount: number }) => {
      appendFileSync(charges, `charged ${amount}\n`);
      if (crashAt === "in-charge") return crashHere();
      return `charged ${amount}`;
    },
    { name: "charge", description: "write", schema: z.object({ amount: z.number() }) },
  );
  // With `deep`, checkout charges through `pay` (idempotent), a tool between the two.
  const pay = tool(
    async ({ amount }: { amount: number }, config) => charge.invoke({ amount }, config),
    {
      name: "pay",
      description: "pays",
      schema: z.object({ amount: z.number() }),
      metadata: { idempotent: true },
    },
  );
  // Through a sub-agent, checkout runs an agent of its own on the same handler (its config's),
  // whose model asks for `inner` (charge, or on two levels pay, which runs the next sub-agent).
  const subAgent = async (amount: number, config: RunnableConfig, inner: StructuredTool) => {
    if (handler === undefined) throw new Error("a sub-agent records through the world's handler");
    const callbackOnly = path === "callback-sub-agent" || path === "callback-sub-agents";
    const agent = createAgent({
      model: subAgentModel(options, inner.name),
      tools: [inner],
      middleware: callbackOnly ? [] : [ledgerMiddleware({ handler })],
      // Without ledgerMiddleware it keeps no state of its own: kept in the graph's checkpointer
      // (a sub-agent's default), it saves the refusal its tool node caught as charge's answer,
      // and LangGraph hands that saved result back when checkout runs again (handler README).
      // Without state of its own, it runs again from its start, its model called live again.
      ...(path === "sub-agent" ? {} : { checkpointer: false }),
    });
    const result = await agent.invoke({ messages: [new HumanMessage(`pay ${amount}`)] }, config);
    return String(result.messages.at(-1)?.content);
  };
  // On two levels, the sub-agent's tool: runs a sub-agent of its own, which charges.
  const payThroughAgent = tool(
    async ({ amount }: { amount: number }, config) => subAgent(amount, config, charge),
    {
      name: "pay",
      description: "pays",
      schema: z.object({ amount: z.number() }),
      metadata: { idempotent: true },
    },
  );
  const checkout = tool(
    async ({ amount }: { amount: number }, config) => {
      // Called with checkout's config (its toolCall too), charge answers with a ToolMessage.
      const charging =
        path === "direct" || path === "deep"
          ? (path === "deep" ? pay : charge).invoke({ amount }, config)
          : subAgent(amount, config, TWO_LEVELS.includes(path) ? payThroughAgent : charge);
      const receipt = options.checkoutCatches
        ? await charging.catch((error: unknown) => `not paid: ${String(error)}`)
        : await charging;
      if (crashAt === "after-charge") return crashHere();
      return `order placed (${String(ToolMessage.isInstance(receipt) ? receipt.content : receipt)})`;
    },
    {
      name: "checkout",
      description: "places the order",
      schema: z.object({ amount: z.number() }),
      metadata: { idempotent: checkoutIdempotent },
    },
  );
  // The scripted replies decide from the messages: ask for checkout, then report its result.
  const decide = (messages: BaseMessage[]) => {
    const results = messages.filter((message) => ToolMessage.isInstance(message));
    if (results.length === 0)
      return new AIMessage({
        content: "",
        tool_calls: [{ id: "call-checkout", name: "checkout", args: { amount: 5 } }],
      });
    for (const result of results) modelSaw.push(`${result.name}: ${String(result.content)}`);
    return new AIMessage(`Done: ${results.map((result) => String(result.content)).join(" | ")}`);
  };
  const model = fakeModel();
  for (let call = 0; call < 4; call++) model.respond(decide);
  return { model, checkout, charge, modelSaw };
}

/** The world under createAgent with the ledger's handler, middleware and checkpoint saver. */
export function agentWorld(
  store: EventStore,
  charges: string,
  crashAt: CrashAt = "none",
  path: ChargePath = "direct",
  options: WorldOptions = {},
) {
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const { model, checkout, modelSaw } = world(charges, crashAt, path, true, handler, options);
  const agent = createAgent({
    model,
    tools: [checkout],
    middleware: [ledgerMiddleware({ handler })],
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  return {
    modelSaw,
    start: () => agent.invoke({ messages: [new HumanMessage("buy it")] }, threadConfig(handler)),
    resume: () =>
      agent.invoke(null, threadConfig(handler)).then(
        (result) => ({ answer: String(result.messages.at(-1)?.content) }),
        (error: unknown) => ({ error }),
      ),
  };
}

/** The world in a plain graph (ToolNode, stopping on errors), recorded by the callback alone. */
export function graphWorld(
  store: EventStore,
  charges: string,
  crashAt: CrashAt = "none",
  checkoutIdempotent = true,
  options: WorldOptions = {},
) {
  const { model, checkout, modelSaw } = world(
    charges,
    crashAt,
    "direct",
    checkoutIdempotent,
    undefined,
    options,
  );
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const bound = model.bindTools([checkout]);
  const graph = toolGraph(bound, [checkout], new LedgerCheckpointSaver({ store }), {
    handleToolErrors: false,
  });
  const settled = (run: Promise<{ messages: BaseMessage[] }>) =>
    run.then(
      (result) => ({ answer: String(result.messages.at(-1)?.content) }),
      (error: unknown) => ({ error }),
    );
  return {
    modelSaw,
    start: () => graph.invoke({ messages: [new HumanMessage("buy it")] }, threadConfig(handler)),
    resume: () => settled(graph.invoke(null, threadConfig(handler))),
    /** The README's plain-graph recipe: these answers, and the tools node for the rest. */
    answerWith: (messages: ToolMessage[]) =>
      settled(
        graph.invoke(new Command({ update: { messages }, goto: "tools" }), threadConfig(handler)),
      ),
  };
}

export const nestedDecisionCrashes = {
  /**
   * createAgent; args: the charges log, where to die, how checkout charges (ChargePath), and
   * "fresh-ids" if the sub-agent's model gives a new tool-call id in each answer.
   */
  "nested-decision:agent": async (store, [charges, crashAt, path, ids]) => {
    await agentWorld(store, String(charges), crashAt as CrashAt, (path ?? "direct") as ChargePath, {
      freshIds: ids === "fresh-ids",
    }).start();
  },
  /** The plain graph; args: the charges log, where to die, "risky" if checkout is not idempotent. */
  "nested-decision:graph": async (store, [charges, crashAt, risky]) => {
    await graphWorld(store, String(charges), crashAt as CrashAt, risky !== "risky").start();
  },
} satisfies Record<string, CrashScenario>;
