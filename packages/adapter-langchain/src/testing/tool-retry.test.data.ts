import { type EventStore, findLedgerError } from "@agent-ledger/core";
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { type ToolRetryMiddlewareConfig, toolRetryMiddleware } from "langchain";
import { z } from "zod";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashAfterCommit, crashHere, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "tool-retry-session";
export const RUN = "tool-retry-run";

/** The model: asks for `lookup` once, then answers with what it got. */
function answer(messages: BaseMessage[]): AIMessage {
  const result = messages.findLast((message) => ToolMessage.isInstance(message));
  if (!result)
    return new AIMessage({
      content: "",
      tool_calls: [{ id: "call-1", name: "lookup", args: { q: "x" } }],
    });
  return new AIMessage(`done: ${String(result.content)}`);
}

/**
 * toolRetryMiddleware as the README sets it beside ledgerMiddleware: ledger errors are not
 * retried, nor handed to the model, but stop the agent.
 */
export const LETS_LEDGER_ERRORS_THROUGH: ToolRetryMiddlewareConfig = {
  retryOn: (error) => !findLedgerError(error),
  onFailure: (error) => {
    if (findLedgerError(error)) throw error;
    return `the tool failed: ${error.message}`;
  },
};

/**
 * createAgent with LangChain's toolRetryMiddleware (set with `retry`) around the ledger's, and
 * the ledger's checkpoint saver. `lookup` throws on its first `failures` runs (the network was
 * down), and is declared idempotent or not; each run is noted as the effect "lookup". With
 * `crashOnRun`, the process dies inside that run of it.
 */
export function retryingAgent(
  store: EventStore,
  options: {
    idempotent: boolean;
    failures: number;
    crashOnRun?: number;
    retry?: ToolRetryMiddlewareConfig;
  },
) {
  const runs = { count: 0 };
  const lookup = tool(
    async ({ q }: { q: string }) => {
      runs.count++;
      noteEffect("lookup");
      if (runs.count === options.crashOnRun) return crashHere();
      if (runs.count <= options.failures) throw new Error(`network down (${runs.count})`);
      return `found ${q}`;
    },
    {
      name: "lookup",
      description: "read",
      schema: z.object({ q: z.string() }),
      metadata: options.idempotent ? { idempotent: true } : {},
    },
  );
  const { agent, handler } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    tools: [lookup],
    answer,
    middleware: (handler) => [
      toolRetryMiddleware({
        maxRetries: 2,
        initialDelayMs: 0,
        jitter: false,
        ...options.retry,
      }),
      ledgerMiddleware({ handler }),
    ],
  });
  const invoke = async (input: { messages: BaseMessage[] } | null) => {
    const result = await agent.invoke(input as never, threadConfig(handler));
    return String(result.messages.at(-1)?.content);
  };
  return { runs, invoke };
}

/** The agent's first invocation. */
export function firstInput() {
  return { messages: [new HumanMessage("go")] };
}

export const toolRetryCrashes = {
  /**
   * `lookup` (args: "idempotent" or not) throws, toolRetryMiddleware runs it again, and the
   * process dies once that retry's completion is committed: before LangGraph saved the tools
   * node's writes, so the resumed graph runs the node again.
   */
  "tool-retry-completed": async (store, args) => {
    const crashing = crashAfterCommit(store, (event) => event.type === "tool.completed");
    const { invoke } = retryingAgent(crashing, {
      idempotent: args[0] === "idempotent",
      failures: 1,
    });
    await invoke(firstInput());
  },
  /** `lookup` (args: "idempotent" or not) throws; the process dies inside its retry. */
  "tool-retry-in-flight": async (store, args) => {
    const { invoke } = retryingAgent(store, {
      idempotent: args[0] === "idempotent",
      failures: 1,
      crashOnRun: 2,
    });
    await invoke(firstInput());
  },
} satisfies Record<string, CrashScenario>;
