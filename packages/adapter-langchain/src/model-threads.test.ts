import { inspectSession, MemoryEventStore } from "@agent-ledger/core";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ledgerAgent, threadConfig } from "./testing/helpers.js";

// One run, several LangGraph threads (one conversation each), resumed by a new handler.
describe("a model call of a thread the resumed run has no call of", () => {
  it("is a call of its own, not a retry of another thread's call that asked the same", async () => {
    const store = new MemoryEventStore();
    const agent = () =>
      ledgerAgent({ store, sessionId: "s", runId: "r", answer: () => new AIMessage("hello") });
    const first = agent();
    await first.agent.invoke(
      { messages: [new HumanMessage("hi")] },
      threadConfig(first.handler, "t1"),
    );
    // A new process: the handler resumes the run, and a new conversation starts the same way.
    const second = agent();
    await second.agent.invoke(
      { messages: [new HumanMessage("hi")] },
      threadConfig(second.handler, "t2"),
    );
    const [run] = (await inspectSession(store, "s")).runs;
    const models = (run?.steps ?? []).filter((step) => step.kind === "model");
    expect(models.map((step) => step.attempts.map((attempt) => attempt.retryOf ?? null))).toEqual([
      [null],
      [null],
    ]);
  });
});
