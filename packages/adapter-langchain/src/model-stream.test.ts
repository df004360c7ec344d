import {
  inspectSession,
  type LedgerEvent,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { RunnableLambda } from "@langchain/core/runnables";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { payloadOf, runEvents } from "./testing/helpers.js";

const SESSION = "s1";
const RUN = "run-1";
const ANSWER = "hello world, long answer";

function setup() {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  const model = new FakeListChatModel({ responses: [ANSWER], sleep: 1 });
  return { store, handler, model };
}

type Failure = { error: { name: string; message: string }; partial?: { text: string } };

/** The run's event types, and the model.failed's payload if any. */
async function ledger(store: MemoryEventStore) {
  const events = await runEvents(store, SESSION, RUN);
  const failed = events.find((event: LedgerEvent) => event.type === "model.failed");
  return {
    types: events.map((event) => event.type),
    failure: failed && payloadOf<Failure>(failed),
    unresolved: (await inspectSession(store, SESSION)).unresolved,
  };
}

/** What a stream's consumer received, and what the ledger says it streamed: a start of it. */
function expectPartOf(partial: { text: string } | undefined, received: string) {
  expect(partial?.text.length).toBeGreaterThan(0);
  expect(received.startsWith(partial?.text ?? "-")).toBe(true);
}

describe("a stream left unfinished (LangChain reports no end for it) is not left open", () => {
  it("broken out of early: closed as failed, with what it streamed, when the run completes", async () => {
    const { store, handler, model } = setup();
    let received = "";
    for await (const chunk of await model.stream("Tell me a story", { callbacks: [handler] })) {
      received += String(chunk.content);
      if (chunk.content === "l") break;
    }
    await handler.completeRun({ ok: true });
    const { types, failure, unresolved } = await ledger(store);
    expect(types).toEqual(["run.started", "model.requested", "model.failed", "run.completed"]);
    expect(failure?.error).toMatchObject({
      name: "StreamLeftUnfinished",
      message: expect.stringContaining("closed"),
    });
    expectPartOf(failure?.partial, received);
    expect(unresolved).toEqual([]);
  });

  it("aborted with a signal: closed as failed with the abort, as it happens", async () => {
    const { store, handler, model } = setup();
    const controller = new AbortController();
    let received = "";
    const stopped = await (async () => {
      for await (const chunk of await model.stream("Tell me a story", {
        callbacks: [handler],
        signal: controller.signal,
      })) {
        received += String(chunk.content);
        if (chunk.content === "l") controller.abort();
      }
    })().catch((error: unknown) => error);
    expect((stopped as Error).name).toBe("AbortError");
    // Recorded without waiting for the run to close.
    await expect.poll(async () => (await ledger(store)).types).toContain("model.failed");
    const { failure } = await ledger(store);
    expect(failure?.error.name).toBe("AbortError");
    expectPartOf(failure?.partial, received);
    await handler.cancelRun("the user went away");
    expect((await ledger(store)).types).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "run.cancelled",
    ]);
  });

  it("read early inside a chain: closed when the chain that called it ends", async () => {
    const { store, handler, model } = setup();
    const firstWord = RunnableLambda.from(async (input: string, config) => {
      let word = "";
      for await (const chunk of await model.stream(input, config)) {
        if (chunk.content === " ") break;
        word += String(chunk.content);
      }
      return word;
    });
    expect(await firstWord.invoke("Tell me a story", { callbacks: [handler] })).toBe("hello");
    const { types, failure } = await ledger(store);
    expect(types).toContain("model.failed");
    expect(failure?.error.message).toContain("ended");
    expectPartOf(failure?.partial, "hello");
  });

  it("a stream read to its end is still recorded once, as completed", async () => {
    const { store, handler, model } = setup();
    let received = "";
    for await (const chunk of await model.stream("Tell me a story", { callbacks: [handler] }))
      received += String(chunk.content);
    await handler.failRun(new Error("the task failed later"));
    expect(received).toBe(ANSWER);
    expect((await ledger(store)).types).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "run.failed",
    ]);
  });
});

describe("closing a run a crash left with a model call in flight", () => {
  it("abandons the model call the dead process left unresolved, and leaves a tool call to a person", async () => {
    const store = new MemoryEventStore();
    // What a process killed mid-stream (and mid-tool) leaves: requests without outcomes.
    const dead = new SessionRecorder({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor: { type: "agent", id: "langchain" },
    });
    await dead.startRun();
    const tool = await dead.beforeToolCall({ toolCallId: "c1", name: "send_email", args: {} });
    const model = await dead.beforeModelCall({ request: { messages: ["Hi"] } });

    // A new process closes the run through a handler of its own: the run is not completed
    // while the tool call may or may not have happened (the core's completeRun refuses it).
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    await expect(handler.completeRun("done")).rejects.toMatchObject({
      code: "unresolved-attempt",
      attempt: { attemptId: tool.attemptId },
    });
    const { types, unresolved } = await ledger(store);
    expect(types.at(-1)).toBe("attempt.abandoned");
    expect(unresolved.map((attempt) => attempt.attemptId)).toEqual([tool.attemptId]);
    const abandoned = (await runEvents(store, SESSION, RUN)).find(
      (event) => event.type === "attempt.abandoned",
    );
    expect(abandoned?.attemptId).toBe(model.attemptId);

    // The person decides; the run then completes.
    await (await handler.getRecorder()).abandon(tool, "checked the outbox: not sent");
    await handler.completeRun("done");
    expect((await ledger(store)).types.slice(-2)).toEqual(["attempt.abandoned", "run.completed"]);
  });
});
