import {
  type EventStore,
  LedgerError,
  type LedgerEvent,
  MemoryEventStore,
  readWholeRun,
  SessionRecorder,
} from "@agent-ledger/core";
import type { LanguageModelV3GenerateResult, LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, tool, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ledgerMiddleware } from "./ledger-middleware.js";
import {
  failsOnceThenAnswers,
  partsStream,
  payload,
  scriptedModel,
  streamPartsOf,
  textResult,
  toolCall,
  toolCallsResult,
  usage,
} from "./testing/scripted-model.test.data.js";
import { type WrapToolsOptions, wrapTools } from "./wrap-tools.js";

const actor = { type: "agent" as const, id: "assistant", framework: "ai-sdk" };
const address = { sessionId: "s1", runId: "r1" };
const eventsOf = (store: EventStore): Promise<LedgerEvent[]> => readWholeRun(store, address);

const script = (): LanguageModelV3GenerateResult[] => [
  toolCallsResult(toolCall("c1", "lookup", { key: "a" }), toolCall("c2", "send", { to: "bob" })),
  toolCallsResult(toolCall("c3", "lookup", { key: "b" })),
  textResult("done: A, sent, B"),
];

/** Tools with side effects counted outside the recorder; `hang` makes one call never finish. */
function makeTools(options: { hang?: string } = {}) {
  const effects: string[] = [];
  let entered: (() => void) | undefined;
  const inTool = new Promise<void>((resolve) => {
    entered = resolve;
  });
  const maybeHang = async (id: string) => {
    if (options.hang === id) {
      entered?.();
      await new Promise(() => undefined);
    }
  };
  const tools = {
    lookup: tool({
      inputSchema: z.object({ key: z.string() }),
      execute: async ({ key }, { toolCallId }) => {
        await maybeHang(toolCallId);
        effects.push(`lookup:${key}`);
        return key.toUpperCase();
      },
    }),
    send: tool({
      inputSchema: z.object({ to: z.string() }),
      execute: async ({ to }, { toolCallId }) => {
        await maybeHang(toolCallId);
        effects.push(`send:${to}`);
        return "sent";
      },
    }),
  };
  return { tools, effects, inTool };
}

async function run(options: {
  recorder: SessionRecorder;
  model: MockLanguageModelV3;
  tools: ReturnType<typeof makeTools>["tools"];
  wrap?: Partial<WrapToolsOptions>;
  prompt?: string;
}) {
  return generateText({
    model: wrapLanguageModel({
      model: options.model,
      middleware: ledgerMiddleware({ recorder: options.recorder }),
    }),
    prompt: options.prompt ?? "do it",
    tools: wrapTools(options.tools, {
      recorder: options.recorder,
      idempotent: ["lookup"],
      ...options.wrap,
    }),
    stopWhen: stepCountIs(5),
  });
}

const resume = (store: EventStore) => SessionRecorder.resume({ store, actor, ...address });

/** The process "dies" inside the tool call `hang` of the script's run (it never returns). */
async function crashInside(store: EventStore, hang: string) {
  const model = scriptedModel(script());
  const tools = makeTools({ hang });
  void run({
    recorder: new SessionRecorder({ store, actor, ...address }),
    model: model.model,
    tools: tools.tools,
  });
  await tools.inTool;
  return { model, tools };
}

/** Streams one model call to its end: the text deltas that arrived, and the errors reported. */
async function streamCollecting(
  recorder: SessionRecorder,
  model: MockLanguageModelV3,
  prompt: string,
) {
  const errors: string[] = [];
  const result = streamText({
    model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
    prompt,
    onError: ({ error }) => {
      errors.push((error as Error).message);
    },
  });
  const deltas: string[] = [];
  for await (const part of result.fullStream)
    if (part.type === "text-delta") deltas.push(part.text);
  return { text: deltas.join(""), errors };
}

describe("resume with replay", () => {
  it("answers every recorded model and tool call from the ledger", async () => {
    const store = new MemoryEventStore();
    const first = scriptedModel(script());
    const live = makeTools();
    const original = await run({
      recorder: new SessionRecorder({ store, actor, ...address }),
      model: first.model,
      tools: live.tools,
    });
    const recorded = await eventsOf(store);

    const replayModel = scriptedModel([]);
    const replayTools = makeTools();
    const replayed = await run({
      recorder: await resume(store),
      model: replayModel.model,
      tools: replayTools.tools,
    });
    expect(replayed.text).toBe(original.text);
    expect(replayed.steps.length).toBe(original.steps.length);
    expect(replayed.toolResults).toEqual(original.toolResults);
    expect(replayModel.calls).toBe(0);
    expect(replayTools.effects).toEqual([]);
    expect(await eventsOf(store)).toEqual(recorded);
  });

  it("re-runs an idempotent tool that was in flight at the crash, then continues live", async () => {
    const store = new MemoryEventStore();
    // The process "dies" inside lookup c3.
    const { model: crashed, tools: crashedTools } = await crashInside(store, "c3");

    const resumedModel = scriptedModel(script().slice(2));
    const resumedTools = makeTools();
    const result = await run({
      recorder: await resume(store),
      model: resumedModel.model,
      tools: resumedTools.tools,
    });
    expect(result.text).toBe("done: A, sent, B");
    expect(crashed.calls + resumedModel.calls).toBe(3);
    expect([...crashedTools.effects, ...resumedTools.effects].sort()).toEqual([
      "lookup:a",
      "lookup:b",
      "send:bob",
    ]);
    const events = await eventsOf(store);
    const lookups = events.filter(
      (event) => event.type === "tool.requested" && payload(event).toolCallId === "c3",
    );
    expect(lookups).toHaveLength(2);
    expect(lookups[1]?.retryOf).toBe(lookups[0]?.attemptId);
  });

  it("stops with unresolved-attempt on a non-idempotent tool in flight, and calls nothing more", async () => {
    const store = new MemoryEventStore();
    await crashInside(store, "c2"); // inside send c2
    await new Promise((resolve) => setTimeout(resolve, 10)); // lookup c1 finishes meanwhile

    const resumedModel = scriptedModel(script().slice(1));
    const resumedTools = makeTools();
    const error = await run({
      recorder: await resume(store),
      model: resumedModel.model,
      tools: resumedTools.tools,
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "unresolved-attempt")).toBe(true);
    expect(resumedTools.effects).toEqual([]);
    expect(resumedModel.calls).toBe(0);
  });

  it("lets a person abandon the unresolved call; the model is told and the run goes on", async () => {
    const store = new MemoryEventStore();
    await crashInside(store, "c2");
    await new Promise((resolve) => setTimeout(resolve, 10));

    const asked: string[] = [];
    const resumedModel = scriptedModel(script().slice(1));
    const result = await run({
      recorder: await resume(store),
      model: resumedModel.model,
      tools: makeTools().tools,
      wrap: {
        onUnresolved: ({ name, toolCallId }) => {
          asked.push(`${name}:${toolCallId}`);
          return { action: "abandon", reason: "checked the outbox: not sent" };
        },
      },
    });
    expect(asked).toEqual(["send:c2"]);
    expect(result.text).toBe("done: A, sent, B");
    const secondRequest = resumedModel.model.doGenerateCalls[0];
    expect(JSON.stringify(secondRequest?.prompt)).toContain("checked the outbox: not sent");
    const events = await eventsOf(store);
    expect(events.some((event) => event.type === "attempt.abandoned")).toBe(true);
  });

  it("throws replay-divergence when the re-execution asks something else", async () => {
    const store = new MemoryEventStore();
    await run({
      recorder: new SessionRecorder({ store, actor, ...address }),
      model: scriptedModel(script()).model,
      tools: makeTools().tools,
    });
    const replayModel = scriptedModel(script());
    const error = await run({
      recorder: await resume(store),
      model: replayModel.model,
      tools: makeTools().tools,
      prompt: "do something else",
    }).catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "replay-divergence")).toBe(true);
    expect(replayModel.calls).toBe(0);
  });

  it("re-emits a recorded stream, finish part included, without calling the provider", async () => {
    const store = new MemoryEventStore();
    const stream = async (recorder: SessionRecorder, model: MockLanguageModelV3) => {
      const tools = makeTools();
      const result = streamText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "stream it",
        tools: wrapTools(tools.tools, { recorder, idempotent: ["lookup"] }),
        stopWhen: stepCountIs(5),
      });
      const parts: string[] = [];
      for await (const part of result.fullStream) parts.push(part.type);
      return {
        parts,
        text: await result.text,
        finishReason: await result.finishReason,
        usage: await result.totalUsage,
        effects: tools.effects,
      };
    };
    const first = scriptedModel(script());
    const original = await stream(new SessionRecorder({ store, actor, ...address }), first.model);
    const replayModel = scriptedModel([]);
    const replayed = await stream(await resume(store), replayModel.model);
    expect(replayed.text).toBe(original.text);
    expect(replayed.finishReason).toBe(original.finishReason);
    expect(replayed.usage).toEqual(original.usage);
    expect(replayed.parts.filter((type) => type === "finish-step")).toHaveLength(3);
    expect(replayed.parts.filter((type) => type === "tool-result")).toHaveLength(3);
    expect(replayed.effects).toEqual([]);
    expect(replayModel.calls).toBe(0);
  });

  it("replays a stream that failed mid-way: the recorded partial content, then the error", async () => {
    const store = new MemoryEventStore();
    const streamOnce = (recorder: SessionRecorder, model: MockLanguageModelV3) =>
      streamCollecting(recorder, model, "count");
    const parts = streamPartsOf(textResult("alpha beta gamma delta")).slice(0, 5);
    parts.push({ type: "error", error: new Error("socket hang up") });
    const failing = new MockLanguageModelV3({
      provider: "scripted",
      modelId: "scripted-1",
      doStream: async () => ({ stream: partsStream(parts) }),
    });
    const original = await streamOnce(new SessionRecorder({ store, actor, ...address }), failing);
    expect(original).toEqual({ text: "alpha beta ", errors: ["socket hang up"] });
    const replayModel = scriptedModel([]);
    const resumed = await resume(store);
    // The resume read the run once; answering the failure reads nothing more.
    let reads = 0;
    const readRun = store.readRun.bind(store);
    store.readRun = (request) => {
      reads++;
      return readRun(request);
    };
    const replayed = await streamOnce(resumed, replayModel.model);
    expect(replayed).toEqual(original);
    expect(replayModel.calls).toBe(0);
    expect(reads).toBe(0);
  });

  it("replays a long partial (moved to the blob store) as the text that had arrived, not its blob marker", async () => {
    const store = new MemoryEventStore();
    const streamOnce = (recorder: SessionRecorder, model: MockLanguageModelV3) =>
      streamCollecting(recorder, model, "write at length");
    // Over the 1 KiB text threshold: the recorded partial keeps a blob reference to it.
    const long = "Grüße, 世界 🌍 ".repeat(200);
    const failing = new MockLanguageModelV3({
      provider: "scripted",
      modelId: "scripted-1",
      doStream: async () => ({
        stream: partsStream([
          { type: "stream-start", warnings: [] },
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: long },
          { type: "error", error: new Error("socket hang up") },
        ]),
      }),
    });
    const original = await streamOnce(new SessionRecorder({ store, actor, ...address }), failing);
    expect(original).toEqual({ text: long, errors: ["socket hang up"] });
    const replayModel = scriptedModel([]);
    const replayed = await streamOnce(await resume(store), replayModel.model);
    expect(replayed).toEqual(original);
    expect(replayModel.calls).toBe(0);
  });

  it("keeps provider metadata that arrives on a delta (Gemini's thoughtSignature): the replayed history is the one sent", async () => {
    const store = new MemoryEventStore();
    const signature = { google: { thoughtSignature: "sig-1" } };
    // As @ai-sdk/google streams it: the signature on the deltas, not on the start part.
    const thinkThenCall: LanguageModelV3StreamPart[] = [
      { type: "stream-start", warnings: [] },
      { type: "reasoning-start", id: "0" },
      { type: "reasoning-delta", id: "0", delta: "look it up", providerMetadata: signature },
      { type: "reasoning-end", id: "0" },
      { type: "text-start", id: "1" },
      { type: "text-delta", id: "1", delta: "Checking.", providerMetadata: signature },
      { type: "text-end", id: "1" },
      { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: '{"key":"a"}' },
      {
        type: "finish",
        finishReason: { unified: "tool-calls", raw: undefined },
        usage: usage(5, 2),
      },
    ];
    const streamRun = async (recorder: SessionRecorder, script: LanguageModelV3StreamPart[][]) => {
      let call = 0;
      const model = new MockLanguageModelV3({
        provider: "scripted",
        modelId: "scripted-1",
        doStream: async () => {
          const parts = script[call++];
          if (!parts) throw new Error(`no answer for call ${call}`);
          return { stream: partsStream(parts) };
        },
      });
      const errors: string[] = [];
      const result = streamText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "find a",
        tools: wrapTools(makeTools().tools, { recorder, idempotent: ["lookup"] }),
        stopWhen: stepCountIs(3),
        onError: ({ error }) => {
          errors.push((error as Error).message);
        },
      });
      await result.consumeStream();
      return { text: await result.text, errors, calls: call };
    };
    const original = await streamRun(new SessionRecorder({ store, actor, ...address }), [
      thinkThenCall,
      streamPartsOf(textResult("a is A")),
    ]);
    expect(original).toEqual({ text: "a is A", errors: [], calls: 2 });
    const replayed = await streamRun(await resume(store), []);
    expect(replayed).toEqual({ text: "a is A", errors: [], calls: 0 });
  });

  it("replays a retried failure: the SDK retries, the ledger answers both attempts", async () => {
    const store = new MemoryEventStore();
    const flaky = () =>
      failsOnceThenAnswers({ message: "rate limited", statusCode: 429 }, textResult("after retry"));
    const generate = (recorder: SessionRecorder, model: MockLanguageModelV3) =>
      generateText({
        model: wrapLanguageModel({ model, middleware: ledgerMiddleware({ recorder }) }),
        prompt: "hi",
        maxRetries: 1,
      });
    const first = flaky();
    await generate(new SessionRecorder({ store, actor, ...address }), first.model);
    expect(first.calls).toBe(2);
    const recorded = await eventsOf(store);
    // The failure and its retry: a second attempt of the same step.
    const models = recorded.filter((event) => event.type.startsWith("model."));
    expect(models.map((event) => event.type)).toEqual([
      "model.requested",
      "model.failed",
      "model.requested",
      "model.completed",
    ]);
    expect(models[2]?.retryOf).toBe(models[0]?.attemptId);
    expect(models[2]?.stepId).toBe(models[0]?.stepId);
    const second = flaky();
    const result = await generate(await resume(store), second.model);
    expect(result.text).toBe("after retry");
    expect(second.calls).toBe(0);
    expect(await eventsOf(store)).toEqual(recorded);
  });
});
