import { AIMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { FlakyStore, ledgerAgent, runEvents, threadConfig } from "./testing/helpers.js";

const SESSION = "window-session";
const RUN = "window-run";

/**
 * One process's agent on the run, on thread `threadId`. Its model answers "hello"; while
 * `crashes.left` is above 0, the process then "dies" as the answer arrives: model.completed is
 * committed, then neither the model node's write nor the next checkpoint reaches the store.
 */
function agentCrashingAfterAnswer(store: FlakyStore, threadId: string, crashes: { left: number }) {
  const { model, handler, agent } = ledgerAgent({
    store,
    sessionId: SESSION,
    runId: RUN,
    answer: () => {
      if (crashes.left > 0) {
        crashes.left--;
        store.failing = true;
        store.failTypes = ["x.langgraph.writes", "checkpoint.saved"];
      }
      return new AIMessage("hello");
    },
  });
  const config = threadConfig(handler, threadId);
  return {
    model,
    invoke: (input: Parameters<typeof agent.invoke>[0]) => agent.invoke(input, config),
  };
}

describe("the window the README documents: model.completed committed, LangGraph's write not", () => {
  it("the resumed run pays for the model call again and records it as a retry of the recorded one", async () => {
    const store = new FlakyStore();
    const crashes = { left: 1 };
    const first = agentCrashingAfterAnswer(store, "thread-1", crashes);
    await expect(first.invoke({ messages: [{ role: "user", content: "hi" }] })).rejects.toThrow();
    store.failing = false;
    const beforeResume = await runEvents(store, SESSION, RUN);
    expect(beforeResume.filter((event) => event.type === "model.completed")).toHaveLength(1);

    const second = agentCrashingAfterAnswer(store, "thread-1", crashes);
    const result = await second.invoke(null);
    expect(result.messages.at(-1)?.content).toBe("hello");
    // One logical call, paid twice: the accepted window.
    expect(first.model.calls + second.model.calls).toBe(2);
    const requested = (await runEvents(store, SESSION, RUN)).filter(
      (event) => event.type === "model.requested",
    );
    expect(requested).toHaveLength(2);
    expect(requested[1]?.stepId).toBe(requested[0]?.stepId);
    expect(requested[1]?.retryOf).toBe(requested[0]?.attemptId);
  });

  it("a second crash in that window: the third process's call is recorded, not taken for the second's", async () => {
    const store = new FlakyStore();
    const crashes = { left: 2 };
    const build = () => agentCrashingAfterAnswer(store, "thread-2", crashes);
    await expect(build().invoke({ messages: [{ role: "user", content: "hi" }] })).rejects.toThrow();
    store.failing = false;
    await expect(build().invoke(null)).rejects.toThrow();
    store.failing = false;
    const result = await build().invoke(null);
    expect(result.messages.at(-1)?.content).toBe("hello");
    const events = await runEvents(store, SESSION, RUN);
    const requested = events.filter((event) => event.type === "model.requested");
    // Three calls paid, three recorded: each a retry of the one before, each with its answer.
    expect(requested).toHaveLength(3);
    expect(requested[1]?.retryOf).toBe(requested[0]?.attemptId);
    expect(requested[2]?.retryOf).toBe(requested[1]?.attemptId);
    expect(new Set(requested.map((event) => event.stepId)).size).toBe(1);
    const completed = events.filter((event) => event.type === "model.completed");
    expect(completed.map((event) => event.attemptId)).toEqual(
      requested.map((event) => event.attemptId),
    );
  });
});
