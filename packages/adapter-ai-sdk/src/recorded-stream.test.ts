import { join } from "node:path";
import {
  type EventStore,
  type JsonObject,
  LedgerError,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { streamText, wrapLanguageModel } from "ai";
import type { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import {
  FAILING_STREAM_RUN,
  finalStep,
  overloadedStep,
  runFailingStream,
  streamingModel,
} from "./testing/failing-stream.test.data.js";
import { assistant as actor, payload } from "./testing/scripted-model.test.data.js";

const scratch = scratchDirectory("ai-sdk-recorded-stream-", { beforeAll, afterAll });

const eventsOf = (store: EventStore) => readWholeRun(store, FAILING_STREAM_RUN);
const typesOf = async (store: EventStore) =>
  (await eventsOf(store)).map((event) => `${event.seq}:${event.type}`);
const newRecorder = (store: EventStore) =>
  new SessionRecorder({ store, ...FAILING_STREAM_RUN, actor });
const resume = (store: EventStore) =>
  SessionRecorder.resume({ store, ...FAILING_STREAM_RUN, actor });

/**
 * A turn the application closed once it ended (`failRun`): a failure that ended a turn still
 * open is asked again on resume (see `turn-ending-failures.test.ts`), one of a closed run is
 * replayed as recorded.
 */
async function closedTurn<T>(recorder: SessionRecorder, turn: Promise<T>): Promise<T> {
  const seen = await turn;
  await recorder.failRun(new Error("the turn ended"));
  return seen;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * Streams one model call the way an application would, and reports everything it saw: the
 * deltas, what `fullStream` threw, what `text` and `finishReason` settled to, what `onError`
 * heard.
 */
async function observe(recorder: SessionRecorder, model: MockLanguageModelV3) {
  const errors: string[] = [];
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    prompt: "say hello",
    onError: ({ error }) => {
      errors.push(messageOf(error));
    },
  });
  const deltas: string[] = [];
  let thrown: string | undefined;
  try {
    for await (const part of result.fullStream)
      if (part.type === "text-delta") deltas.push(part.text);
  } catch (error) {
    thrown = messageOf(error);
  }
  const settled = (promise: PromiseLike<unknown>) =>
    Promise.resolve(promise).then(
      (value) => ({ value }),
      (error: unknown) => ({ rejected: messageOf(error) }),
    );
  return {
    deltas,
    thrown,
    text: await settled(result.text),
    finishReason: await settled(result.finishReason),
    errors,
  };
}

describe("a stream that failed part-way, replayed", () => {
  it("goes on past an error part as it did live: the tool call, the finish part, the next step", async () => {
    const store = new MemoryEventStore();
    const live = streamingModel([overloadedStep(), finalStep()]);
    const original = await runFailingStream(newRecorder(store), live.model);
    expect(original.outcome).toEqual({ text: "final", steps: 2, finish: "stop" });
    // The tool call arrived after the error part: refused with that error, never run.
    expect(original.effects).toEqual([]);
    expect(original.errors).toEqual([{ type: "overloaded_error", message: "Overloaded" }]);
    expect(live.calls).toBe(2);
    const recorded = await eventsOf(store);
    expect(recorded.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "model.requested",
      "model.completed",
    ]);
    // The failure holds the whole stream, error part in its place, up to its end.
    const failed = payload(recorded[2]);
    expect(failed.error.message).toContain("Overloaded");
    expect(failed.partial.content).toEqual([
      { type: "text", text: "Hello world" },
      { type: "tool-call", toolCallId: "c1", toolName: "a", input: '{"x":1}' },
    ]);
    expect(failed.partial.stream.parts.map((part: JsonObject) => part.type)).toEqual(
      overloadedStep().map((part) => part.type),
    );

    const replayModel = streamingModel([]);
    const replayed = await runFailingStream(await resume(store), replayModel.model);
    expect(replayed).toEqual(original);
    expect(replayModel.calls).toBe(0);
    expect(await eventsOf(store)).toEqual(recorded);
  });

  it("SIGKILLed inside the next step's model call: the resume replays the failed stream and makes the call in flight again", async () => {
    const path = join(scratch, "overloaded-then-killed.db");
    const crashed = await crashInChild("stream failed mid-way, then inside step 2", path);
    expect(crashed.modelCalls).toBe(1); // step 2's call was out when the process died
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    expect(await typesOf(store)).toEqual([
      "0:run.started",
      "1:model.requested",
      "2:model.failed",
      "3:model.requested",
    ]);

    // Only step 2 may reach the provider: step 1 is answered from the ledger.
    const resumedModel = streamingModel([finalStep()]);
    const resumed = await runFailingStream(await resume(store), resumedModel.model);
    expect(resumed.outcome).toEqual({ text: "final", steps: 2, finish: "stop" });
    expect(resumed.effects).toEqual([]);
    expect(resumedModel.calls).toBe(1);
    const events = await eventsOf(store);
    expect(events.map((event) => `${event.seq}:${event.type}`)).toEqual([
      "0:run.started",
      "1:model.requested",
      "2:model.failed",
      "3:model.requested",
      "4:model.requested",
      "5:model.completed",
    ]);
    expect(events[4]?.retryOf).toBe(events[3]?.attemptId);
  });

  it("a stream that throws part-way throws again at the same place", async () => {
    const store = new MemoryEventStore();
    const throwing = () => {
      const parts: LanguageModelV3StreamPart[] = [
        { type: "stream-start", warnings: [] },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Hello" },
      ];
      return streamingModel([
        async () =>
          new ReadableStream<LanguageModelV3StreamPart>({
            pull(controller) {
              const part = parts.shift();
              if (part) controller.enqueue(part);
              else controller.error(new Error("socket hang up"));
            },
          }),
      ]);
    };
    const live = newRecorder(store);
    const original = await closedTurn(live, observe(live, throwing().model));
    expect(original).toMatchObject({
      deltas: ["Hello"],
      thrown: "socket hang up",
      text: { rejected: "socket hang up" },
    });
    const replayModel = streamingModel([]);
    expect(await observe(await resume(store), replayModel.model)).toEqual(original);
    expect(replayModel.calls).toBe(0);
  });

  it("a stream that ends without a finish part ends again without one, and no error is reported", async () => {
    const store = new MemoryEventStore();
    const cut: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hello" },
      { type: "text-end", id: "t" },
    ];
    const live = newRecorder(store);
    const original = await closedTurn(live, observe(live, streamingModel([cut]).model));
    expect(original).toEqual({
      deltas: ["Hello"],
      thrown: undefined,
      text: { value: "Hello" },
      finishReason: { value: "other" },
      errors: [],
    });
    const failed = (await eventsOf(store)).find((event) => event.type === "model.failed");
    expect(payload(failed).error.message).toBe("the model stream ended without a finish part");
    const replayModel = streamingModel([]);
    expect(await observe(await resume(store), replayModel.model)).toEqual(original);
    expect(replayModel.calls).toBe(0);
  });

  it("a failure recorded by the previous version (what had arrived, without its parts) is replayed as before", async () => {
    const store = new MemoryEventStore();
    const recorder = newRecorder(store);
    // The previous version recorded the content assembled up to the error part, and no parts.
    const modelFailed = recorder.modelFailed.bind(recorder);
    recorder.modelFailed = (attempt, error, options = {}) => {
      const { stream: _parts, ...partial } = (options.partial ?? {}) as JsonObject;
      return modelFailed(attempt, error, {
        ...options,
        partial: { ...partial, content: [{ type: "text", text: "Hello" }] },
      });
    };
    const cut: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hello" },
      { type: "error", error: new Error("connection reset") },
    ];
    const original = await closedTurn(recorder, observe(recorder, streamingModel([cut]).model));
    expect(original).toMatchObject({ deltas: ["Hello"], errors: ["connection reset"] });
    const failed = payload((await eventsOf(store)).find((event) => event.type === "model.failed"));
    expect(failed.partial.stream).toBeUndefined();
    const replayModel = streamingModel([]);
    expect(await observe(await resume(store), replayModel.model)).toEqual(original);
    expect(replayModel.calls).toBe(0);
  });

  it("a stream record of a version this package does not know is refused with invalid-event, not replayed some other way", async () => {
    const store = new MemoryEventStore();
    const recorder = newRecorder(store);
    const modelFailed = recorder.modelFailed.bind(recorder);
    recorder.modelFailed = (attempt, error, options = {}) => {
      const partial = options.partial as JsonObject;
      const stream = { ...(partial.stream as JsonObject), version: 2 };
      return modelFailed(attempt, error, { ...options, partial: { ...partial, stream } });
    };
    await closedTurn(recorder, observe(recorder, streamingModel([overloadedStep()]).model));
    const replayModel = streamingModel([]);
    const errors: unknown[] = [];
    const replayed = streamText({
      model: wrapLanguageModel({
        model: replayModel.model,
        middleware: ledgerMiddleware({ recorder: await resume(store) }),
      }),
      prompt: "say hello",
      maxRetries: 0,
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await replayed.consumeStream();
    expect(errors).toHaveLength(1);
    expect(LedgerError.isInstance(errors[0], "invalid-event")).toBe(true);
    expect((errors[0] as LedgerError).path).toBe("$.payload.partial.stream.version");
    expect(replayModel.calls).toBe(0);
  });
});
