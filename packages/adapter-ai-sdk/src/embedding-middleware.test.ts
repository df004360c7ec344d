import { join } from "node:path";
import {
  inspectSession,
  LedgerError,
  type LedgerEvent,
  MemoryEventStore,
  SessionRecorder,
  toAtif,
} from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { exportedSpans } from "@agent-ledger/core/testing/otel";
import { APICallError } from "@ai-sdk/provider";
import { embed, embedMany, generateText, wrapEmbeddingModel, wrapLanguageModel } from "ai";
import { MockEmbeddingModelV3, MockLanguageModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { ledgerEmbeddingMiddleware } from "./embedding-middleware.js";
import { ledgerMiddleware } from "./ledger-middleware.js";
import { crashInChild } from "./testing/crash-in-child.test.data.js";
import {
  EMBEDDING_RUN,
  embeddingModel,
  embedQueryThenDocuments,
  vectorOf,
} from "./testing/embedding.test.data.js";
import {
  eventsOf,
  expectUnholdableResponseRecordedAsFailure,
} from "./testing/recorded-events.test.data.js";
import {
  assistant,
  assistantRecorder as setup,
  textResult,
} from "./testing/scripted-model.test.data.js";

const scratch = scratchDirectory("ai-sdk-embedding-", { beforeAll, afterAll });

const payloadOf = (event: LedgerEvent | undefined) => event?.payload as Record<string, unknown>;

describe("ledgerEmbeddingMiddleware", () => {
  it("records an embedding call as a model call, committed before the provider is called", async () => {
    const { store, recorder } = setup();
    let seenAtCall: string[] = [];
    const { model } = embeddingModel(async () => {
      seenAtCall = (await eventsOf(store)).map((event) => event.type);
    });
    const wrapped = wrapEmbeddingModel({
      model,
      middleware: ledgerEmbeddingMiddleware({ recorder }),
    });
    const result = await embedMany({ model: wrapped, values: ["alpha", "beta"], maxRetries: 0 });
    expect(result.embeddings).toEqual([vectorOf("alpha"), vectorOf("beta")]);
    expect(seenAtCall).toEqual(["run.started", "model.requested"]);
    const [, requested, completed] = await eventsOf(store);
    expect(payloadOf(requested).request).toEqual({
      operation: "embeddings",
      model: { provider: "openai.embedding", modelId: "text-embedding-3-small" },
      values: ["alpha", "beta"],
    });
    // Without recordEmbeddings, what the call gave but not the vectors.
    expect(payloadOf(completed).response).toEqual({
      count: 2,
      dimensions: 3,
      usage: { inputTokens: 6 },
    });
  });

  it("keeps credentials in provider options out of the ledger", async () => {
    const { store, recorder } = setup();
    const { model } = embeddingModel();
    const wrapped = wrapEmbeddingModel({
      model,
      middleware: ledgerEmbeddingMiddleware({ recorder }),
    });
    await embed({
      model: wrapped,
      value: "alpha",
      maxRetries: 0,
      providerOptions: { openai: { dimensions: 3, apiKey: "sk-secret-embedding-key" } },
    });
    const events = JSON.stringify(await eventsOf(store));
    expect(events).not.toContain("sk-secret-embedding-key");
    expect(events).toContain('"dimensions":3');
  });

  it("records a failed call, and the error reaches the caller", async () => {
    const { store, recorder } = setup();
    const model = new MockEmbeddingModelV3({
      doEmbed: async () => {
        throw new Error("quota exceeded");
      },
    });
    const wrapped = wrapEmbeddingModel({
      model,
      middleware: ledgerEmbeddingMiddleware({ recorder }),
    });
    await expect(embed({ model: wrapped, value: "alpha", maxRetries: 0 })).rejects.toThrow(
      "quota exceeded",
    );
    expect((await eventsOf(store)).map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.failed",
    ]);
  });

  it("with recordEmbeddings, a vector holding -0 is recorded (as 0) and handed back unchanged", async () => {
    const { store, recorder } = setup();
    let calls = 0;
    const model = new MockEmbeddingModelV3({
      doEmbed: async () => {
        calls++;
        return { embeddings: [JSON.parse("[0.12,-0.0,0.3]") as number[]], warnings: [] };
      },
    });
    const wrapped = wrapEmbeddingModel({
      model,
      middleware: ledgerEmbeddingMiddleware({ recorder, recordEmbeddings: true }),
    });
    for (const value of ["alpha", "beta"]) {
      const { embedding } = await embed({ model: wrapped, value, maxRetries: 0 });
      expect(Object.is(embedding[1], -0)).toBe(true);
    }
    expect(calls).toBe(2);
    const events = await eventsOf(store);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "model.requested",
      "model.completed",
    ]);
    expect(payloadOf(events[2]).response).toMatchObject({ embeddings: [[0.12, 0, 0.3]] });
  });

  it("a response the ledger cannot hold is recorded as the call's failure, not left in flight; the run goes on", async () => {
    const { store, recorder } = setup();
    let calls = 0;
    const model = new MockEmbeddingModelV3({
      doEmbed: async () => ({
        embeddings: [[0.1, 0.2]],
        // A provider that reports a counter as a bigint: not JSON.
        providerMetadata: calls++ === 0 ? { acme: { units: 10n as never } } : undefined,
        warnings: [],
      }),
    });
    const wrapped = wrapEmbeddingModel({
      model,
      middleware: ledgerEmbeddingMiddleware({ recorder }),
    });
    const error = await embed({ model: wrapped, value: "alpha", maxRetries: 0 }).catch(
      (caught: unknown) => caught,
    );
    expect(LedgerError.isInstance(error, "non-serializable")).toBe(true);
    expect((error as LedgerError).path).toBe("$.providerMetadata.acme.units");
    // The next call goes ahead.
    expect((await embed({ model: wrapped, value: "beta", maxRetries: 0 })).embedding).toEqual([
      0.1, 0.2,
    ]);
    expect(calls).toBe(2);
    await expectUnholdableResponseRecordedAsFailure(store);
  });

  it("a retry inside a parallel embedMany is a new attempt of the failed call's step, whatever ran meanwhile", async () => {
    const { store, recorder } = setup();
    const failedOnce = new Set<string>();
    const calls: string[] = [];
    const model = new MockEmbeddingModelV3({
      maxEmbeddingsPerCall: 1,
      supportsParallelCalls: true,
      doEmbed: async ({ values }) => {
        const [value = ""] = values;
        calls.push(value);
        if (value === "a" && !failedOnce.has(value)) {
          failedOnce.add(value);
          // Fails once the parallel call for "bb" has been recorded.
          await new Promise((resolve) => setTimeout(resolve, 20));
          throw new APICallError({
            message: "Too Many Requests",
            url: "https://example.invalid/embeddings",
            requestBodyValues: {},
            statusCode: 429,
            responseHeaders: { "retry-after-ms": "1" },
            isRetryable: true,
          });
        }
        return { embeddings: values.map(vectorOf), warnings: [] };
      },
    });
    const wrapped = wrapEmbeddingModel({
      model,
      middleware: ledgerEmbeddingMiddleware({ recorder }),
    });
    const result = await embedMany({ model: wrapped, values: ["a", "bb"], maxRetries: 2 });
    expect(result.embeddings).toEqual([vectorOf("a"), vectorOf("bb")]);
    expect(calls).toEqual(["a", "bb", "a"]);
    const requested = (await eventsOf(store)).filter((event) => event.type === "model.requested");
    const valuesOf = (event: LedgerEvent | undefined) =>
      (payloadOf(event).request as { values: string[] }).values;
    expect(requested.map(valuesOf)).toEqual([["a"], ["bb"], ["a"]]);
    const [first, other, retry] = requested;
    expect(retry?.retryOf).toBe(first?.attemptId);
    expect(retry?.stepId).toBe(first?.stepId);
    expect(other?.stepId).not.toBe(first?.stepId);
    expect(other?.retryOf).toBeUndefined();
  });

  it("with recordEmbeddings, a resumed run is answered from the ledger: the provider is not called again", async () => {
    const store = new MemoryEventStore();
    const first = embeddingModel();
    const recorder = new SessionRecorder({ store, sessionId: "s1", runId: "r1", actor: assistant });
    const wrap = (model: MockEmbeddingModelV3, rec: SessionRecorder) =>
      wrapEmbeddingModel({
        model,
        middleware: ledgerEmbeddingMiddleware({ recorder: rec, recordEmbeddings: true }),
      });
    const original = await embedMany({
      model: wrap(first.model, recorder),
      values: ["alpha", "beta"],
      maxRetries: 0,
    });
    const completed = (await eventsOf(store)).at(-1);
    expect(payloadOf(completed).response).toMatchObject({
      embeddings: [vectorOf("alpha"), vectorOf("beta")],
    });

    const second = embeddingModel();
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: "s1",
      runId: "r1",
      actor: assistant,
    });
    const replayed = await embedMany({
      model: wrap(second.model, resumed),
      values: ["alpha", "beta"],
      maxRetries: 0,
    });
    expect(replayed.embeddings).toEqual(original.embeddings);
    expect(replayed.usage).toEqual({ tokens: 6 });
    expect(second.calls).toEqual([]);
    expect(
      (await eventsOf(store)).filter((event) => event.type === "model.requested"),
    ).toHaveLength(1);
  });

  it("is an `embeddings` span in OpenTelemetry, and no step of the ATIF trajectory", async () => {
    const { store, recorder } = setup();
    const { model } = embeddingModel();
    await embed({
      model: wrapEmbeddingModel({ model, middleware: ledgerEmbeddingMiddleware({ recorder }) }),
      value: "alpha",
      maxRetries: 0,
    });
    const span = (await exportedSpans(store, "s1")).find((each) => each.kind === 2);
    expect(span?.name).toBe("embeddings text-embedding-3-small");
    expect(span?.attributes).toMatchObject({
      "gen_ai.operation.name": "embeddings",
      "gen_ai.request.model": "text-embedding-3-small",
      "gen_ai.usage.input_tokens": 3,
    });
    // Only ATIF's placeholder for a run without a turn: no agent step, no embedding model.
    const steps = (await toAtif(store, "s1")).steps;
    expect(steps.map((step) => step.source)).toEqual(["system"]);
    expect(JSON.stringify(steps)).not.toContain("text-embedding");
  });
});

describe("ledgerEmbeddingMiddleware after a crash (SIGKILL)", () => {
  it("the call in flight is shown unresolved; the resume makes both calls again, as retries, with the same vectors", async () => {
    const path = join(scratch, "embedding-crash.db");
    const crashed = await crashInChild("embedding inside the documents call", path);
    expect(crashed.modelCalls).toBe(2);
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const [unresolved, ...others] = (await inspectSession(store, EMBEDDING_RUN.sessionId))
      .unresolved;
    expect(others).toEqual([]);
    expect(unresolved).toMatchObject({ kind: "model" });

    const recorder = await SessionRecorder.resume({ store, ...EMBEDDING_RUN, actor: assistant });
    const { model, calls } = embeddingModel();
    const vectors = await embedQueryThenDocuments(recorder, model);
    expect(vectors).toEqual([
      vectorOf("what is a ledger?"),
      vectorOf("a ledger records"),
      vectorOf("calls that went out"),
    ]);
    // Recorded without vectors: the query is embedded again, as is the call that was out.
    expect(calls).toEqual([["what is a ledger?"], ["a ledger records", "calls that went out"]]);
    const requested = (await eventsOf(store, EMBEDDING_RUN)).filter(
      (event) => event.type === "model.requested",
    );
    expect(requested).toHaveLength(4);
    expect(requested[2]?.retryOf).toBe(requested[0]?.attemptId);
    expect(requested[3]?.retryOf).toBe(requested[1]?.attemptId);
    expect((await inspectSession(store, EMBEDDING_RUN.sessionId)).unresolved).toEqual([]);
  });

  it("a run resumed a second time answers the retry the first resume made, where that resume made it", async () => {
    // An app that embeds the question, then asks the model; stopped after (a crash, or a
    // tool left unresolved), resumed, stopped again, resumed again: each resume embeds again.
    const path = join(scratch, "embedding-resumed-twice.db");
    const store = new SqliteEventStore({ path });
    await store.init();
    onTestFinished(() => store.close());
    const address = { store, sessionId: "rag-chat", runId: "turn-1", actor: assistant };
    const answer = async (recorder: SessionRecorder, questions: string[]) => {
      const { model: embedder, calls: embeddings } = embeddingModel();
      // Answers each question by its text, whichever calls the ledger answers instead.
      const model = new MockLanguageModelV3({
        doGenerate: async ({ prompt }) =>
          textResult(`re: ${JSON.stringify(prompt.at(-1)?.content)}`),
      });
      const query = await embed({
        model: wrapEmbeddingModel({
          model: embedder,
          middleware: ledgerEmbeddingMiddleware({ recorder }),
        }),
        value: "what is a ledger?",
        maxRetries: 0,
      });
      const wrapped = wrapLanguageModel({
        model,
        middleware: ledgerMiddleware({ recorder }),
      });
      const texts: string[] = [];
      for (const question of questions)
        texts.push((await generateText({ model: wrapped, prompt: question, maxRetries: 0 })).text);
      return {
        vector: query.embedding,
        texts,
        embeddings,
        modelCalls: model.doGenerateCalls.length,
      };
    };

    const reply = (question: string) => `re: ${JSON.stringify([{ type: "text", text: question }])}`;
    const first = await answer(new SessionRecorder(address), ["one"]);
    expect(first.texts).toEqual([reply("one")]);
    // The first resume: the question is embedded again (after the model call's events), the
    // recorded model call is answered, the next one is made live.
    const second = await answer(await SessionRecorder.resume(address), ["one", "two"]);
    expect(second).toMatchObject({ texts: [reply("one"), reply("two")], modelCalls: 1 });
    expect(second.embeddings).toEqual([["what is a ledger?"]]);
    // The second: both model calls are answered from the ledger, the question embedded again.
    const third = await answer(await SessionRecorder.resume(address), ["one", "two", "three"]);
    expect(third).toMatchObject({
      texts: [reply("one"), reply("two"), reply("three")],
      modelCalls: 1,
    });
    expect(third.vector).toEqual(vectorOf("what is a ledger?"));
    expect(third.embeddings).toEqual([["what is a ledger?"]]);
    const embeddingRequests = (await eventsOf(store, address)).filter(
      (event) =>
        event.type === "model.requested" &&
        (payloadOf(event).request as { operation?: string }).operation === "embeddings",
    );
    // Each resume's retry repeats the one before it: one chain, one step.
    expect(embeddingRequests).toHaveLength(3);
    expect(embeddingRequests[1]?.retryOf).toBe(embeddingRequests[0]?.attemptId);
    expect(embeddingRequests[2]?.retryOf).toBe(embeddingRequests[1]?.attemptId);
    expect(new Set(embeddingRequests.map((event) => event.stepId)).size).toBe(1);
    expect((await inspectSession(store, "rag-chat")).unresolved).toEqual([]);
  });
});
