import { inspectSession, type LedgerEvent, MemoryEventStore } from "@agent-ledger/core";
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { FakeChatModel, FakeListChatModel } from "@langchain/core/utils/testing";
import { describe, expect, it } from "vitest";
import { LedgerCallbackHandler } from "./callback-handler.js";
import { restoreMessages } from "./restore-messages.js";
import { payloadOf, runEvents } from "./testing/helpers.js";
import { ScriptedChatModel } from "./testing/scripted-chat-model.js";

const SESSION = "s1";
const RUN = "run-1";
const ANSWER = "the answer the app used";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A model that takes `ms` to answer and does not stop on its signal: LangChain does not check
 * the signal around a non-streamed `_generate`, so its caller gets the answer.
 */
function slowModel(ms: number) {
  return new ScriptedChatModel(async () => {
    await sleep(ms);
    return new AIMessage(ANSWER);
  });
}

/**
 * LangChain's FakeChatModel, whose `_generate` streams internally (its tokens go to the run
 * manager) and does not stop on its signal: it streams `words`, `gapMs` apart, waits `tailMs`,
 * then answers (the prompt echoed, as FakeChatModel does). LangChain awaits `_generate` in
 * `invoke`, so it reports the end, and the caller gets the answer.
 */
class InternallyStreamingModel extends FakeChatModel {
  constructor(
    readonly words: string[],
    readonly gapMs: number,
    readonly tailMs = 0,
  ) {
    super({});
  }

  override async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ) {
    for (const word of this.words) {
      await sleep(this.gapMs);
      await runManager?.handleLLMNewToken(word);
    }
    await sleep(this.tailMs);
    return super._generate(messages, options, runManager);
  }
}

function setup() {
  const store = new MemoryEventStore();
  const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
  return { store, handler };
}

type Completion = { response: { usage: unknown; generations: { text: string }[][] } };
type Failure = { error: { name: string; message: string }; partial?: { text: string } };

async function ledger(store: MemoryEventStore) {
  const events = await runEvents(store, SESSION, RUN);
  const find = (type: string) => events.find((event: LedgerEvent) => event.type === type);
  return {
    types: events.map((event) => event.type),
    completed: find("model.completed"),
    failed: find("model.failed"),
    unresolved: (await inspectSession(store, SESSION)).unresolved,
  };
}

describe("a model call its signal aborts, and that answers anyway, is recorded completed", () => {
  it("a timeout that fires before the answer: the answer and its usage are recorded", async () => {
    const { store, handler } = setup();
    const answer = await slowModel(120).invoke("hi", { callbacks: [handler], timeout: 30 });
    expect(answer.content).toBe(ANSWER);
    const { types, completed } = await ledger(store);
    expect(types).toEqual(["run.started", "model.requested", "model.completed"]);
    const { response } = payloadOf<Completion>(completed);
    expect(response.generations[0]?.[0]?.text).toBe(ANSWER);
    expect(response.usage).toMatchObject({ input_tokens: 1, output_tokens: 3 });
    // The turn the app used is in the history a resumed loop is given.
    const { messages } = await restoreMessages(store, { sessionId: SESSION, runId: RUN });
    expect(messages.map((message) => message.content)).toEqual(["hi", ANSWER]);
  });

  it("a signal aborted mid-call: the answer is recorded, nothing is closed as aborted", async () => {
    const { store, handler } = setup();
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const answer = await slowModel(120).invoke("hi", {
      callbacks: [handler],
      signal: controller.signal,
    });
    expect(answer.content).toBe(ANSWER);
    // Long past any grace an aborted stream is given: the call stays completed.
    await sleep(400);
    await handler.completeRun("done");
    const { types, failed } = await ledger(store);
    expect(types).toEqual(["run.started", "model.requested", "model.completed", "run.completed"]);
    expect(failed).toBeUndefined();
  });
});

describe("a model call its signal aborts, whose _generate streams internally and answers anyway", () => {
  it("streaming on after the abort, past the grace: recorded completed, as the caller got it", async () => {
    const { store, handler } = setup();
    // A token every 100 ms, the abort after the first: the answer comes ~400 ms after the abort.
    const model = new InternallyStreamingModel(["a ", "b ", "c ", "d ", "e "], 100);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 130);
    const answer = await model.invoke("hi", { callbacks: [handler], signal: controller.signal });
    expect(answer.content).toBe("hi");
    await sleep(300);
    const { types, completed } = await ledger(store);
    expect(types).toEqual(["run.started", "model.requested", "model.completed"]);
    expect(payloadOf<Completion>(completed).response.generations[0]?.[0]?.text).toBe("hi");
  });

  it("silent after the abort for longer than the grace: closed as aborted (a limit: the README says so)", async () => {
    const { store, handler } = setup();
    // Streamed before the abort, nothing after it for 400 ms, then the answer: nothing tells this
    // call from a stream aborted between chunks, which LangChain never ends.
    const model = new InternallyStreamingModel(["a "], 10, 400);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const answer = await model.invoke("hi", { callbacks: [handler], signal: controller.signal });
    expect(answer.content).toBe("hi");
    const { types, failed } = await ledger(store);
    expect(types).toEqual(["run.started", "model.requested", "model.failed"]);
    expect(payloadOf<Failure>(failed)).toMatchObject({
      error: { name: "AbortError" },
      partial: { text: "a " },
    });
  });
});

describe("a model call its signal aborts, and that does not answer", () => {
  it("a stream aborted before its first chunk: failed with the error LangChain reports", async () => {
    const { store, handler } = setup();
    const model = new FakeListChatModel({ responses: ["hello world"], sleep: 100 });
    const stopped = await (async () => {
      for await (const _chunk of await model.stream("hi", { callbacks: [handler], timeout: 30 }));
    })().catch((error: unknown) => error);
    expect((stopped as Error).name).toBe("TimeoutError");
    // LangChain reports the error once the pending chunk comes, without the run being closed.
    await expect.poll(async () => (await ledger(store)).types).toContain("model.failed");
    const { failed, unresolved } = await ledger(store);
    expect(payloadOf<Failure>(failed).error.name).toBe("TimeoutError");
    expect(unresolved).toEqual([]);
  });

  it("a stream aborted while a chunk was on its way: failed with LangChain's error and what it streamed", async () => {
    const { store, handler } = setup();
    const model = new FakeListChatModel({ responses: ["hello world"], sleep: 100 });
    const controller = new AbortController();
    let received = "";
    const stopped = await (async () => {
      const stream = await model.stream("hi", { callbacks: [handler], signal: controller.signal });
      for await (const chunk of stream) {
        received += String(chunk.content);
        setTimeout(() => controller.abort(), 30);
      }
    })().catch((error: unknown) => error);
    expect((stopped as Error).name).toBe("AbortError");
    await expect.poll(async () => (await ledger(store)).types).toContain("model.failed");
    const { error, partial } = payloadOf<Failure>((await ledger(store)).failed);
    // LangChain's own error (not the handler's closing after the grace): the chunk came.
    expect(error).toMatchObject({ name: "AbortError", message: "This operation was aborted" });
    expect(partial?.text).toBe(received);
  });

  it("a call that never ends: closed as aborted when the run is closed, and its late end is ignored", async () => {
    const { store, handler } = setup();
    let answer: (message: AIMessage) => void = () => undefined;
    const model = new ScriptedChatModel(
      () => new Promise<AIMessage>((resolve) => (answer = resolve)),
    );
    const controller = new AbortController();
    const call = model.invoke("hi", { callbacks: [handler], signal: controller.signal });
    await expect.poll(async () => (await ledger(store)).types).toContain("model.requested");
    controller.abort();
    // Still in flight as far as the ledger knows: it may yet answer.
    await sleep(400);
    expect((await ledger(store)).unresolved).toHaveLength(1);
    await handler.cancelRun("the user went away");
    const { types, failed, unresolved } = await ledger(store);
    expect(types).toEqual(["run.started", "model.requested", "model.failed", "run.cancelled"]);
    expect(payloadOf<Failure>(failed).error.name).toBe("AbortError");
    expect(unresolved).toEqual([]);
    answer(new AIMessage("too late"));
    await call;
    expect((await ledger(store)).types.at(-1)).toBe("run.cancelled");
  });

  it("a call whose chain stopped waiting at the abort: closed as aborted when the chain ends", async () => {
    const { store, handler } = setup();
    const model = slowModel(200);
    const controller = new AbortController();
    // A RunnableLambda stops waiting for what it runs when its signal aborts (LangGraph too).
    const chain = RunnableLambda.from((input: string, config) => model.invoke(input, config));
    setTimeout(() => controller.abort(), 30);
    const stopped = await chain
      .invoke("hi", { callbacks: [handler], signal: controller.signal })
      .catch((error: unknown) => error);
    expect((stopped as Error).name).toBe("AbortError");
    const { failed, unresolved } = await ledger(store);
    expect(payloadOf<Failure>(failed).error.name).toBe("AbortError");
    expect(unresolved).toEqual([]);
    // The answer the app no longer waited for changes nothing.
    await sleep(250);
    expect((await ledger(store)).types.filter((type) => type.startsWith("model."))).toEqual([
      "model.requested",
      "model.failed",
    ]);
  });
});
