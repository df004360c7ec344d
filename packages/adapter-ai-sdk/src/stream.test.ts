import {
  LedgerError,
  MemoryEventStore,
  SessionRecorder,
  StoreUnavailableError,
} from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  eventsOf,
  expectUnholdableResponseRecordedAsFailure,
} from "./testing/recorded-events.test.data.js";
import {
  assistant as actor,
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
import { wrapTools } from "./wrap-tools.js";

/** A slow stream of parts that records whether it was cancelled. */
function slowStream(parts: LanguageModelV3StreamPart[], delayMs = 5) {
  let index = 0;
  const state = { cancelled: false, pulled: 0 };
  const stream = new ReadableStream<LanguageModelV3StreamPart>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, delayMs));
      const part = parts[index++];
      state.pulled = index;
      if (part === undefined) controller.close();
      else controller.enqueue(part);
    },
    cancel() {
      state.cancelled = true;
    },
  });
  return { stream, state };
}

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

  it("a tool call that arrives after an error part is refused with that error, not left waiting forever", async () => {
    const { store, recorder } = setup();
    // The SDK treats an error part as non-fatal: it goes on reading and runs the tool call.
    const parts: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "error", error: new Error("transient upstream error") },
      { type: "tool-call", toolCallId: "c1", toolName: "send", input: '{"to":"bob"}' },
      {
        type: "finish",
        finishReason: { unified: "tool-calls", raw: undefined },
        usage: usage(3, 1),
      },
    ];
    const model = new MockLanguageModelV3({
      doStream: async () => ({ stream: partsStream(parts) }),
    });
    const effects: string[] = [];
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "email bob",
      tools: wrapTools(
        {
          send: tool({
            inputSchema: z.object({ to: z.string() }),
            execute: async ({ to }) => {
              effects.push(to);
              return "sent";
            },
          }),
        },
        { recorder },
      ),
      // One step: the SDK's next step calls the model again (see the next test).
      stopWhen: stepCountIs(1),
      onError: () => undefined,
    });
    const toolErrors: string[] = [];
    const consumed = (async () => {
      for await (const part of result.fullStream)
        if (part.type === "tool-error") toolErrors.push((part.error as Error).message);
      return "ended";
    })();
    const hung = new Promise((resolve) => setTimeout(() => resolve("still waiting"), 3000));
    expect(await Promise.race([consumed, hung])).toBe("ended");
    expect(toolErrors).toEqual(["transient upstream error"]);
    expect(effects).toEqual([]);
    expect((await eventsOf(store)).map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
    ]);
  });

  it("a provider error part fails that model call only: the loop and the next turn go on, on the same recorder", async () => {
    const { store, recorder } = setup();
    // Anthropic's mid-stream "Overloaded": an error part, and the SDK reads on.
    const overloaded: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      { type: "tool-call", toolCallId: "c1", toolName: "send", input: '{"to":"bob"}' },
      {
        type: "finish",
        finishReason: { unified: "tool-calls", raw: undefined },
        usage: usage(3, 1),
      },
    ];
    let streams = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: partsStream(streams++ === 0 ? overloaded : streamPartsOf(textResult("recovered"))),
      }),
      doGenerate: async () => textResult("turn 2 answer"),
    });
    const wrapped = wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) });
    const effects: string[] = [];
    const tools = wrapTools(
      {
        send: tool({
          inputSchema: z.object({ to: z.string() }),
          execute: async ({ to }) => {
            effects.push(to);
            return "sent";
          },
        }),
      },
      { recorder },
    );
    const toolErrors: string[] = [];
    const first = streamText({
      model: wrapped,
      prompt: "email bob",
      tools,
      stopWhen: stepCountIs(3),
      onError: () => undefined,
      onStepFinish: (step) => {
        for (const part of step.content)
          if (part.type === "tool-error") toolErrors.push((part.error as Error).message);
      },
    });
    expect(await first.text).toBe("recovered");
    expect(toolErrors).toEqual(["Overloaded"]);
    expect(effects).toEqual([]);

    const second = await generateText({ model: wrapped, tools, prompt: "and now?" });
    expect(second.text).toBe("turn 2 answer");
    expect((await eventsOf(store)).map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
      "model.requested",
      "model.completed",
      "model.requested",
      "model.completed",
    ]);
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

  it("runs streamed tool calls after their completion is committed, caused by it", async () => {
    const { store, recorder } = setup();
    const counter = scriptedModel([
      toolCallsResult(toolCall("c1", "add", { a: 2, b: 3 }), toolCall("c2", "add", { a: 1, b: 1 })),
      textResult("5 and 2"),
    ]);
    const seenAtExecute: string[][] = [];
    const tools = wrapTools(
      {
        add: tool({
          inputSchema: z.object({ a: z.number(), b: z.number() }),
          execute: async ({ a, b }) => {
            seenAtExecute.push((await eventsOf(store)).map((event) => event.type));
            return a + b;
          },
        }),
      },
      { recorder, idempotent: () => true },
    );
    const result = streamText({
      model: wrapLanguageModel({
        model: counter.model,
        middleware: ledgerMiddleware({ recorder }),
      }),
      prompt: "add",
      tools,
      stopWhen: stepCountIs(3),
    });
    expect(await result.text).toBe("5 and 2");
    expect(counter.calls).toBe(2);
    for (const types of seenAtExecute) expect(types).toContain("model.completed");
    const events = await eventsOf(store);
    const completion = events.find((event) => event.type === "model.completed");
    const toolRequests = events.filter((event) => event.type === "tool.requested");
    expect(toolRequests).toHaveLength(2);
    for (const request of toolRequests) expect(request.causedByEventId).toBe(completion?.eventId);
    expect(
      events.filter((event) => event.type === "tool.completed").map((e) => payload(e).result),
    ).toEqual(expect.arrayContaining([5, 2]));
  });

  it("a provider that reuses tool call ids each step: each tool waits for, and is caused by, its own step's completion", async () => {
    const { store, recorder } = setup();
    // Some OpenAI-compatible servers number tool calls per response: call_0 on every step.
    const steps = [
      toolCallsResult(toolCall("call_0", "add", { a: 1, b: 1 })),
      toolCallsResult(toolCall("call_0", "add", { a: 2, b: 2 })),
      textResult("2 then 4"),
    ];
    let call = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        const step = steps[call++];
        if (!step) throw new Error("no more steps");
        // Slow parts: the finish part comes well after the tool call part.
        return { stream: slowStream(streamPartsOf(step), 10).stream };
      },
    });
    const seenAtExecute: number[] = [];
    const tools = wrapTools(
      {
        add: tool({
          inputSchema: z.object({ a: z.number(), b: z.number() }),
          execute: async ({ a, b }) => {
            const events = await eventsOf(store);
            seenAtExecute.push(events.filter((event) => event.type === "model.completed").length);
            return a + b;
          },
        }),
      },
      { recorder, idempotent: () => true },
    );
    const result = streamText({
      model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
      prompt: "add twice",
      tools,
      stopWhen: stepCountIs(4),
    });
    expect(await result.text).toBe("2 then 4");
    // Each tool ran only once its own step's completion was in the ledger.
    expect(seenAtExecute).toEqual([1, 2]);
    const events = await eventsOf(store);
    const completions = events.filter((event) => event.type === "model.completed");
    const requests = events.filter((event) => event.type === "tool.requested");
    expect(requests.map((event) => event.causedByEventId)).toEqual([
      completions[0]?.eventId,
      completions[1]?.eventId,
    ]);
  });

  it("a streaming tool (async generator) still streams its preliminary results; its last value is recorded", async () => {
    const makeTools = () => ({
      progress: tool({
        inputSchema: z.object({ steps: z.number() }),
        async *execute({ steps }) {
          for (let step = 1; step <= steps; step++) yield { done: step, of: steps };
        },
      }),
    });
    const toolResults = async (recorder?: SessionRecorder) => {
      const { model } = scriptedModel([
        toolCallsResult(toolCall("c1", "progress", { steps: 3 })),
        textResult("all done"),
      ]);
      const result = streamText({
        model: recorder
          ? wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) })
          : model,
        prompt: "go",
        tools: recorder ? wrapTools(makeTools(), { recorder }) : makeTools(),
        stopWhen: stepCountIs(3),
      });
      const parts: unknown[] = [];
      for await (const part of result.fullStream)
        if (part.type === "tool-result")
          parts.push({ output: part.output, preliminary: part.preliminary });
      return parts;
    };
    const { store, recorder } = setup();
    const unwrapped = await toolResults();
    expect(unwrapped).toHaveLength(4); // three preliminary results, then the final one
    expect(await toolResults(recorder)).toEqual(unwrapped);
    const completed = (await eventsOf(store)).find((event) => event.type === "tool.completed");
    expect(payload(completed).result).toEqual({ done: 3, of: 3 });
    // Replayed: the recorded result, final as before, and the tool does not run again.
    const replayed = await toolResults(
      await SessionRecorder.resume({ store, actor, sessionId: "s1", runId: "r1" }),
    );
    expect(replayed.at(-1)).toEqual(unwrapped.at(-1));
    expect((await eventsOf(store)).filter((event) => event.type === "tool.requested")).toHaveLength(
      1,
    );
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
