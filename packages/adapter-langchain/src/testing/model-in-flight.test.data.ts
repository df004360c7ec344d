import type { EventStore } from "@agent-ledger/core";
import { AIMessage } from "@langchain/core/messages";
import { dynamicSystemPromptMiddleware } from "langchain";
import { ledgerMiddleware } from "../ledger-middleware.js";
import { type CrashScenario, crashHere } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "in-flight-session";
export const RUN = "in-flight-run";

/**
 * One process's agent on the run. Its system prompt changes at every model call (as one with
 * the current time does): it shows a clock that this process starts at `clock`, so the process
 * that resumes never shows the prompt the crashed one sent. With `crashInModelCall`, the process
 * dies during its model call: the call's outcome is never recorded.
 */
export function agentWithDynamicPrompt(
  store: EventStore,
  options: { clock: number; crashInModelCall?: boolean },
) {
  let clock = options.clock;
  const { model, handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    answer: () => (options.crashInModelCall ? crashHere() : new AIMessage("hello")),
    middleware: (ledgerHandler) => [
      dynamicSystemPromptMiddleware(() => `You are helpful. Now: ${String(++clock)}.`),
      ledgerMiddleware({ handler: ledgerHandler }),
    ],
  });
  const config = threadConfig(handler);
  return {
    model,
    invoke: (input: Parameters<typeof agent.invoke>[0]) => agent.invoke(input, config),
  };
}

export const modelInFlightCrashes = {
  /** The first process: it dies while its first model call is in flight. */
  "model-in-flight": async (store) => {
    const first = agentWithDynamicPrompt(store, { clock: 0, crashInModelCall: true });
    await first.invoke({ messages: [{ role: "user", content: "hi" }] });
  },
} satisfies Record<string, CrashScenario>;
