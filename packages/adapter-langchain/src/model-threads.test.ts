import { join } from "node:path";
import { inspectSession, MemoryEventStore } from "@agent-ledger/core";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { ledgerAgent, threadConfig } from "./testing/helpers.js";
import { FIRST, SECOND, SESSION, threadsAgent } from "./testing/model-threads.test.data.js";

const scratch = scratchDirectory("langchain-model-threads-", { beforeAll, afterAll });

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

describe("a model call of one thread in flight at a crash", () => {
  it("stays that thread's to retry when another thread of the run goes on first", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "in-flight.db");
    await crashInChild("model-in-flight-other-thread", path);
    const store = await openLedger(path, onTestFinished);
    const before = await inspectSession(store, SESSION);
    expect(before.unresolved.map((attempt) => attempt.kind)).toEqual(["model"]);

    // A new process: thread A goes on with a new message (its checkpoint holds its first turn),
    // then thread B goes on from its checkpoint, asking what it asked when the process died.
    const second = threadsAgent(store);
    const a = await second.say(FIRST, "more");
    expect(a.messages.at(-1)?.content).toBe(`you said ${FIRST}: more`);
    const b = await second.say(SECOND, null);
    expect(b.messages.at(-1)?.content).toBe(`you said ${SECOND}: hi`);

    const { runs, unresolved } = await inspectSession(store, SESSION);
    expect(unresolved).toEqual([]);
    const models = (runs[0]?.steps ?? []).filter((step) => step.kind === "model");
    // A's first turn; B's call, the one in flight then its retry in the same step; A's second
    // turn.
    const [b1, b2] = models[1]?.attempts ?? [];
    expect(models.map((step) => step.attempts.map((attempt) => attempt.status))).toEqual([
      ["completed"],
      ["requested", "completed"],
      ["completed"],
    ]);
    expect(b2?.attemptId).toBeDefined();
    expect(b1?.retriedBy).toBe(b2?.attemptId);
  });
});
