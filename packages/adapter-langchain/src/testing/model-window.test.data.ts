import type { EventStore } from "@agent-ledger/core";
import { AIMessage } from "@langchain/core/messages";
import { type CrashScenario, crashAfterCommit, noteEffect } from "./crash-point.js";
import { ledgerAgent, threadConfig } from "./helpers.js";

export const SESSION = "window-session";
export const RUN = "window-run";

/**
 * One process's agent on the run, on thread `threadId`: its model answers "hello".
 * `onModelCall` runs as each call is paid for.
 */
export function helloAgent(store: EventStore, threadId: string, onModelCall?: () => void) {
  const { model, handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    answer: () => {
      onModelCall?.();
      return new AIMessage("hello");
    },
  });
  const config = threadConfig(handler, threadId);
  return {
    model,
    invoke: (input: Parameters<typeof agent.invoke>[0]) => agent.invoke(input, config),
  };
}

export const modelWindowCrashes = {
  /**
   * A process that dies as the answer arrives: model.completed is committed, then neither the
   * model node's write nor the next checkpoint reaches the ledger. It starts thread `threadId`
   * (`from` "start") or resumes it (`from` "resume"), and notes each model call it pays for.
   */
  "model-window": async (store, [threadId = "thread-1", from = "start"]) => {
    const crashing = crashAfterCommit(store, (event) => event.type === "model.completed");
    const agent = helloAgent(crashing, threadId, () => noteEffect("model"));
    await agent.invoke(from === "start" ? { messages: [{ role: "user", content: "hi" }] } : null);
  },
} satisfies Record<string, CrashScenario>;
