import { join } from "node:path";
import {
  type EventStore,
  LedgerError,
  MemoryEventStore,
  SessionRecorder,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { generateText, stepCountIs, streamText, wrapLanguageModel } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import type { CrashScenarioName } from "./testing/crash-scenarios.test.data.js";
import { address, eventsOf, makeTools, run, script } from "./testing/replay-agent.test.data.js";
import {
  assistant as actor,
  failsOnceThenAnswers,
  partsStream,
  payload,
  scriptedModel,
  streamPartsOf,
  textResult,
  usage,
} from "./testing/scripted-model.test.data.js";
import { wrapTools } from "./wrap-tools.js";

const scratch = scratchDirectory("ai-sdk-replay-", { beforeAll, afterAll });
let crashes = 0;

const resume = (store: EventStore) => SessionRecorder.resume({ store, actor, ...address });

/**
 * The script's run, in a child process recording to a SQLite file, SIGKILLed at the crash point
 * of `scenario`: the file, opened again as the next process would, and what the child did.
 */
async function crashInside(scenario: CrashScenarioName) {
  // A file of its own: two tests may crash the same scenario.
  const path = join(scratch, `crash-${++crashes}.db`);
  const crashed = await crashInChild(scenario, path);
  const store = new SqliteEventStore({ path });
  await store.init();
  onTestFinished(() => store.close());
  return { store, crashed };
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
    // The process dies inside lookup c3.
    const { store, crashed } = await crashInside("replay inside lookup c3");
    // Where it died: after the first step (both its calls), before lookup c3's effect.
    expect([...crashed.effects].sort()).toEqual(["lookup:a", "send:bob"]);
    expect(crashed.modelCalls).toBe(2);

    const resumedModel = scriptedModel(script().slice(2));
    const resumedTools = makeTools();
    const result = await run({
      recorder: await resume(store),
      model: resumedModel.model,
      tools: resumedTools.tools,
    });
    expect(result.text).toBe("done: A, sent, B");
    expect(crashed.modelCalls + resumedModel.calls).toBe(3);
    expect([...crashed.effects, ...resumedTools.effects].sort()).toEqual([
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
    // The process dies inside send c2, once lookup c1 has finished.
    const { store, crashed } = await crashInside("replay inside send c2");
    expect(crashed).toEqual({ effects: ["lookup:a"], modelCalls: 1 });

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
    // As above: dead inside send c2, lookup c1 done.
    const { store, crashed } = await crashInside("replay inside send c2");
    expect(crashed).toEqual({ effects: ["lookup:a"], modelCalls: 1 });

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
    // The application closed the turn that ended so: replayed, not asked again.
    const live = new SessionRecorder({ store, actor, ...address });
    const original = await streamOnce(live, failing);
    await live.failRun(new Error("the turn ended"));
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
    // The application closed the turn that ended so: replayed, not asked again.
    const live = new SessionRecorder({ store, actor, ...address });
    const original = await streamOnce(live, failing);
    await live.failRun(new Error("the turn ended"));
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
