import { inspectSession } from "@agent-ledger/core";
import { AIMessage } from "@langchain/core/messages";
import { dynamicSystemPromptMiddleware } from "langchain";
import { describe, expect, it } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { FlakyStore, ledgerAgent, threadConfig } from "./testing/helpers.js";

const SESSION = "in-flight-session";
const RUN = "in-flight-run";

/** The time the system prompt shows: it moves on between the processes. */
let clock = 0;

/**
 * One process's agent on the run. Its system prompt changes at every model call (as one with
 * the current time does); while `crash.armed`, the process "dies" during the model call: the
 * store goes down, the call's outcome is never recorded.
 */
function agentWithDynamicPrompt(store: FlakyStore, crash: { armed: boolean }) {
  const { model, handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    answer: () => {
      if (crash.armed) {
        crash.armed = false;
        store.failing = true;
        throw new Error("process died");
      }
      return new AIMessage("hello");
    },
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

describe("a model call in flight at a crash, asked again with another prompt on resume", () => {
  it("is closed (abandoned) and the new call is the next attempt of its step", async () => {
    const store = new FlakyStore();
    const crash = { armed: true };
    const first = agentWithDynamicPrompt(store, crash);
    await expect(first.invoke({ messages: [{ role: "user", content: "hi" }] })).rejects.toThrow();
    store.failing = false;
    expect((await inspectSession(store, SESSION)).unresolved).toHaveLength(1);

    const second = agentWithDynamicPrompt(store, crash);
    const result = await second.invoke(null);
    expect(result.messages.at(-1)?.content).toBe("hello");
    const { runs, unresolved } = await inspectSession(store, SESSION);
    expect(unresolved).toEqual([]);
    const steps = (runs[0]?.steps ?? []).filter((step) => step.kind === "model");
    expect(steps.map((step) => step.attempts.map((attempt) => attempt.status))).toEqual([
      ["abandoned", "completed"],
    ]);
  });
});
