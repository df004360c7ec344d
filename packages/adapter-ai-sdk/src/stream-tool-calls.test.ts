import { SessionRecorder } from "@agent-ledger/core";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { eventsOf } from "./testing/recorded-events.test.data.js";
import {
  assistant as actor,
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

describe("ledgerMiddleware with streamText", () => {
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
});
