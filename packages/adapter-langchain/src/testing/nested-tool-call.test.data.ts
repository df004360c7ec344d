import type { EventStore } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, ToolMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { createAgent } from "langchain";
import { z } from "zod";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { LedgerCheckpointSaver } from "../checkpoint-saver.js";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";
import { threadConfig } from "./helpers.js";
import { ScriptedChatModel } from "./scripted-chat-model.js";

export const SESSION = "nested-session";
export const RUN = "nested-run";

export function script(messages: BaseMessage[]) {
  if (messages.some((message) => ToolMessage.isInstance(message))) return new AIMessage("done");
  return new AIMessage({
    content: "",
    tool_calls: [{ id: "call-lookup", name: "lookup", args: { key: "x" } }],
  });
}

/** How many times each tool ran (in this process, plus those a crashed one ran). */
export interface Runs {
  lookup: number;
  audit: number;
}

/**
 * `lookup` calls `audit` with its own config (callbacks and all), as tools commonly do:
 * directly, or through a chain (a RunnableLambda, as a sub-chain or retriever would).
 * `runs`: the runs a crashed process made before this one; `note` hears of each run.
 */
export function tools(
  options: {
    through?: "direct" | "chain";
    afterAudit?: () => Promise<void> | void;
    runs?: Runs;
    note?: (name: keyof Runs) => void;
  } = {},
) {
  const runs: Runs = { ...(options.runs ?? { lookup: 0, audit: 0 }) };
  const ran = (name: keyof Runs) => {
    runs[name]++;
    options.note?.(name);
  };
  const audit = tool(
    async ({ what }: { what: string }) => {
      ran("audit");
      return `audited ${what}`;
    },
    {
      name: "audit",
      description: "write",
      schema: z.object({ what: z.string() }),
      metadata: { effect: "write" },
    },
  );
  const chain = RunnableLambda.from((what: string, config) => audit.invoke({ what }, config));
  const lookup = tool(
    async ({ key }: { key: string }, config) => {
      ran("lookup");
      if (options.through === "chain") await chain.invoke(key, config);
      else await audit.invoke({ what: key }, config);
      await options.afterAudit?.();
      return `value of ${key}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ key: z.string() }),
      metadata: { idempotent: true, effect: "read" },
    },
  );
  return { runs, list: [lookup, audit] };
}

/** One process's agent with `list`: the handler, the middleware and the saver, over `store`. */
export function agentWithSaver(store: EventStore, list: ReturnType<typeof tools>["list"]) {
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const agent = createAgent({
    model: new ScriptedChatModel(script),
    tools: list,
    middleware: [ledgerMiddleware({ handler })],
    checkpointer: new LedgerCheckpointSaver({ store }),
  });
  return { handler, agent };
}

export const nestedToolCallCrashes = {
  /** The process dies inside lookup, once audit (reached through a chain) has had its effect. */
  "nested-tool-call:crash-in-lookup": async (store) => {
    const { list } = tools({ through: "chain", afterAudit: crashHere, note: noteEffect });
    const first = agentWithSaver(store, list);
    await first.agent.invoke(
      { messages: [{ role: "user", content: "go" }] },
      threadConfig(first.handler),
    );
  },
} satisfies Record<string, CrashScenario>;
