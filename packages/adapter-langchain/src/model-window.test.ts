import { join } from "node:path";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crashInChild, openLedger } from "./testing/crashing-agent.test.data.js";
import { runEvents } from "./testing/helpers.js";
import { helloAgent, RUN, SESSION } from "./testing/model-window.test.data.js";

const scratch = scratchDirectory("langchain-window-", { beforeAll, afterAll });

// Concurrent: a crash test mostly waits for its child to load LangChain (about a second), and
// the tests share nothing (each has its own ledger).
describe.concurrent("the window the README documents: model.completed committed, LangGraph's write not", () => {
  it("the resumed run pays for the model call again and records it as a retry of the recorded one", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "once.db");
    const first = await crashInChild("model-window", path, "thread-1", "start");
    const store = await openLedger(path, onTestFinished);
    const beforeResume = await runEvents(store, SESSION, RUN);
    expect(beforeResume.filter((event) => event.type === "model.completed")).toHaveLength(1);

    const second = helloAgent(store, "thread-1");
    const result = await second.invoke(null);
    expect(result.messages.at(-1)?.content).toBe("hello");
    // One logical call, paid twice: the accepted window.
    expect(first.count("model") + second.model.calls).toBe(2);
    const requested = (await runEvents(store, SESSION, RUN)).filter(
      (event) => event.type === "model.requested",
    );
    expect(requested).toHaveLength(2);
    expect(requested[1]?.stepId).toBe(requested[0]?.stepId);
    expect(requested[1]?.retryOf).toBe(requested[0]?.attemptId);
  });

  it("a second crash in that window: the third process's call is recorded, not taken for the second's", async ({
    onTestFinished,
  }) => {
    const path = join(scratch, "twice.db");
    await crashInChild("model-window", path, "thread-2", "start");
    await crashInChild("model-window", path, "thread-2", "resume");
    const store = await openLedger(path, onTestFinished);
    const result = await helloAgent(store, "thread-2").invoke(null);
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
