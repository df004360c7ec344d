import { type EventStore, findLedgerError } from "@agent-ledger/core";
import { type BaseMessage, HumanMessage } from "@langchain/core/messages";
import { type ToolRetryMiddlewareConfig, toolRetryMiddleware } from "langchain";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashAfterCommit } from "./crash-point.js";
import { askForLookup, flakyLookup } from "./flaky-lookup.test.data.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "tool-retry-session";
export const RUN = "tool-retry-run";

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
 * down), and is declared idempotent or not (see flakyLookup: `inChild`, `crashOnRun`).
 */
export function retryingAgent(
  store: EventStore,
  options: {
    idempotent: boolean;
    failures: number;
    crashOnRun?: number;
    inChild?: boolean;
    retry?: ToolRetryMiddlewareConfig;
  },
) {
  const { runs, lookup } = flakyLookup(options);
  const { agent, handler } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    tools: [lookup],
    answer: askForLookup,
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
      inChild: true,
    });
    await invoke(firstInput());
  },
  /** `lookup` (args: "idempotent" or not) throws; the process dies inside its retry. */
  "tool-retry-in-flight": async (store, args) => {
    const { invoke } = retryingAgent(store, {
      idempotent: args[0] === "idempotent",
      failures: 1,
      crashOnRun: 2,
      inChild: true,
    });
    await invoke(firstInput());
  },
} satisfies Record<string, CrashScenario>;
