import { LedgerError, MemoryEventStore, StoreUnavailableError } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  eventsOf,
  expectUnholdableResponseRecordedAsFailure,
} from "./testing/recorded-events.test.data.js";
import {
  failsOnceThenAnswers,
  partsStream,
  payload,
  scriptedModel,
  assistantRecorder as setup,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
  usage,
} from "./testing/scripted-model.test.data.js";
import { slowStream } from "./testing/slow-stream.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const longText = textResult("one two three four five six seven eight nine ten");

describe("ledgerMiddleware with streamText", () => {
  it("passes the stream through and records the assembled completion before the finish part", async () => {
    const { store, recorder } = setup();
    const { model } = scriptedModel([longText]);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "count",
    });
    const deltas: string[] = [];
    let typesAtFinish: string[] = [];
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") deltas.push(part.text);
      if (part.type === "finish-step") typesAtFinish = (await eventsOf(store)).map((e) => e.type);
    }
    expect(deltas.length).toBe(10);
    expect(deltas.join("")).toBe("one two three four five six seven eight nine ten");
    expect(typesAtFinish).toContain("model.completed");
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
    ]);
    const response = payload(events[2]).response;
    expect(response.content).toEqual([
      { type: "text", text: "one two three four five six seven eight nine ten" },
    ]);
    expect(response.finishReason.unified).toBe("stop");
    expect(response.usage.outputTokens.total).toBe(5);
    expect(response.response.id).toBe(longText.response?.id);
  });

  it("records the response metadata the SDK reports when a provider sends it in parts", async () => {
    const { store, recorder } = setup();
    const parts: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "response-metadata", id: "resp-7", timestamp: new Date(1_700_000_000_000) },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "hi" },
      { type: "text-end", id: "t" },
      // A later part names only what it learned: the earlier fields still hold.
      { type: "response-metadata", modelId: "model-2025-01" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: usage(2, 1) },
    ];
    const model = new MockLanguageModelV3({
      doStream: async () => ({ stream: partsStream(parts) }),
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "hi",
    });
    const reported = await result.response;
    expect(reported.id).toBe("resp-7");
    const recorded = payload((await eventsOf(store)).find((e) => e.type === "model.completed"));
    expect(recorded.response.response).toEqual({
      id: reported.id,
      modelId: reported.modelId,
      timestamp: reported.timestamp.toISOString(),
    });
  });

  it("records model.failed with the partial content at an error part", async () => {
    const { store, recorder } = setup();
    const parts = streamPartsOf(longText).slice(0, 5);
    parts.push({ type: "error", error: new Error("connection reset") });
    const model = new MockLanguageModelV3({
      doStream: async () => ({ stream: partsStream(parts) }),
    });
    const errors: unknown[] = [];
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "count",
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    await result.consumeStream();
    expect(errors).toHaveLength(1);
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
    ]);
    expect(payload(events[2]).error.message).toBe("connection reset");
    expect(payload(events[2]).partial.content).toEqual([{ type: "text", text: "one two " }]);
  });

  it("records model.failed when doStream throws", async () => {
    const { store, recorder } = setup();
    const model = new MockLanguageModelV3({
      doStream: async () => {
        throw new Error("bad gateway");
      },
    });
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "count",
      maxRetries: 0,
      onError: () => undefined,
    });
    await result.consumeStream();
    const events = await eventsOf(store);
    expect(events.map((event) => event.type).slice(-1)).toEqual(["model.failed"]);
    expect(payload(events[2]).error.message).toBe("bad gateway");
  });

  it("records a retried doStream as a new attempt of the same step", async () => {
    const { store, recorder } = setup();
    const { model } = failsOnceThenAnswers({ message: "overloaded" }, longText);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "count",
      maxRetries: 1,
    });
    expect(await result.text).toBe("one two three four five six seven eight nine ten");
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "model.requested",
      "model.completed",
    ]);
    expect(events[3]?.retryOf).toBe(events[1]?.attemptId);
    expect(events[3]?.stepId).toBe(events[1]?.stepId);
  });

  it("records model.failed with what had arrived when the caller aborts", async () => {
    const { store, recorder } = setup();
    const slow = slowStream(streamPartsOf(longText));
    const model = new MockLanguageModelV3({ doStream: async () => ({ stream: slow.stream }) });
    const controller = new AbortController();
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "count",
      abortSignal: controller.signal,
    });
    let deltas = 0;
    for await (const part of result.fullStream) {
      if (part.type === "text-delta" && ++deltas === 3) controller.abort();
    }
    await new Promise((resolve) => setTimeout(resolve, 30));
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
    ]);
    const failed = payload(events[2]);
    expect(failed.error.name).toBe("AbortError");
    expect(failed.partial.content[0].text).toMatch(/^one two three/);
    expect(slow.state.cancelled).toBe(true);
    expect(slow.state.pulled).toBeLessThan(streamPartsOf(longText).length);
  });

  it("records model.failed when a direct consumer cancels the model stream", async () => {
    const { store, recorder } = setup();
    const slow = slowStream(streamPartsOf(longText), 1);
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({ doStream: async () => ({ stream: slow.stream }) }),
      middleware: ledgerMiddleware({ recorder }),
    });
    const { stream } = await model.doStream({
      prompt: [{ role: "user", content: [{ type: "text", text: "count" }] }],
    });
    const reader = stream.getReader();
    for (let index = 0; index < 5; index++) await reader.read();
    await reader.cancel("user closed the tab");
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
    ]);
    expect(payload(events[2]).error.message).toBe("user closed the tab");
    expect(payload(events[2]).partial.content).toEqual([{ type: "text", text: "one two " }]);
    expect(slow.state.cancelled).toBe(true);
  });

  it("records a completion when the consumer only stops reading (the SDK drains the model stream)", async () => {
    const { store, recorder } = setup();
    const { model } = scriptedModel([longText]);
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "count",
    });
    for await (const part of result.fullStream) if (part.type === "text-delta") break;
    await new Promise((resolve) => setTimeout(resolve, 30));
    const types = (await eventsOf(store)).map((event) => event.type);
    expect(types).toEqual(["run.started", "model.requested", "model.completed"]);
  });

  it("a streamed response the ledger cannot hold is recorded as the call's failure, not left in flight; the run goes on", async () => {
    const { store, recorder } = setup();
    const unrecordable = streamPartsOf(textResult("first"));
    const finish = unrecordable.pop() as Extract<LanguageModelV3StreamPart, { type: "finish" }>;
    // A provider that reports a counter as a bigint: not JSON.
    unrecordable.push({ ...finish, providerMetadata: { acme: { units: 10n as never } } });
    let calls = 0;
    const model = wrapLanguageModel({
      model: new MockLanguageModelV3({
        doStream: async () => ({
          stream: partsStream(calls++ === 0 ? unrecordable : streamPartsOf(textResult("second"))),
        }),
      }),
      middleware: ledgerMiddleware({ recorder }),
    });
    const errors: unknown[] = [];
    const first = streamText({
      model,
      prompt: "one",
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    const types: string[] = [];
    await (async () => {
      for await (const part of first.fullStream) types.push(part.type);
    })().catch((error: unknown) => errors.push(error));
    expect(types).not.toContain("finish-step");
    expect(errors.some((error) => LedgerError.isInstance(error, "non-serializable"))).toBe(true);
    expect(await streamText({ model, prompt: "two" }).text).toBe("second");
    expect(calls).toBe(2);
    await expectUnholdableResponseRecordedAsFailure(store);
  });

  it("fails closed: no finish part, no tool run and no next call when the completion cannot be committed", async () => {
    class FailingStore extends MemoryEventStore {
      override async append(request: Parameters<MemoryEventStore["append"]>[0]) {
        if (request.events.some((event) => event.type === "model.completed"))
          throw new StoreUnavailableError("disk full");
        return super.append(request);
      }
    }
    const { recorder } = setup(new FailingStore());
    const counter = scriptedModel([
      toolCallsResult(toolCall("c1", "add", { a: 2, b: 3 })),
      textResult("5"),
    ]);
    let executed = 0;
    const tools = wrapTools(
      {
        add: tool({
          inputSchema: z.object({ a: z.number(), b: z.number() }),
          execute: async ({ a, b }) => {
            executed++;
            return a + b;
          },
        }),
      },
      { recorder },
    );
    const errors: unknown[] = [];
    const types: string[] = [];
    const result = streamText({
      model: wrapLanguageModel({
        model: counter.model,
        middleware: ledgerMiddleware({ recorder }),
      }),
      prompt: "add",
      tools,
      stopWhen: stepCountIs(3),
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    // The ledger error reaches the caller (as the stream's error).
    const thrown = await (async () => {
      for await (const part of result.fullStream) types.push(part.type);
    })().catch((error: unknown) => error);
    expect(types).not.toContain("finish-step");
    expect(types).not.toContain("tool-result");
    expect(executed).toBe(0);
    expect(counter.calls).toBe(1);
    expect(
      [thrown, ...errors].some((error) => LedgerError.isInstance(error, "store-unavailable")),
    ).toBe(true);
  });
});
