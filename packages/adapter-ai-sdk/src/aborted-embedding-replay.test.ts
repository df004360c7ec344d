import { join } from "node:path";
import { SessionRecorder } from "@agent-ledger/core";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import { scratchDirectory } from "@agent-ledger/core/testing";
import { embed, embedMany, wrapEmbeddingModel } from "ai";
import { MockEmbeddingModelV3 } from "ai/test";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ledgerEmbeddingMiddleware } from "./embedding-middleware.js";
import { embeddingModel, vectorOf } from "./testing/embedding.test.data.js";
import { eventsOf } from "./testing/recorded-events.test.data.js";
import { assistant as actor } from "./testing/scripted-model.test.data.js";

const scratch = scratchDirectory("ai-sdk-aborted-embedding-", { beforeAll, afterAll });

const address = { sessionId: "rag", runId: "lookup-1" };

/** An embedding provider that answers only when its caller aborts: with the abort's reason. */
function hangingModel() {
  return new MockEmbeddingModelV3({
    provider: "openai.embedding",
    modelId: "text-embedding-3-small",
    // As `embeddingModel`: every text of an embedMany in one call, so the requests match.
    maxEmbeddingsPerCall: 16,
    supportsParallelCalls: false,
    doEmbed: ({ abortSignal }) =>
      new Promise((_, reject) => {
        abortSignal?.addEventListener("abort", () => reject(abortSignal.reason), { once: true });
      }),
  });
}

/**
 * One process of the app: the run's ledger opened from `path`, the recorder new or resumed,
 * `work` given the wrapped embedding model, and the ledger closed after.
 */
async function inProcess<T>(
  path: string,
  {
    resume,
    model,
    recordEmbeddings = false,
  }: {
    resume: boolean;
    model: MockEmbeddingModelV3;
    recordEmbeddings?: boolean;
  },
  work: (wrapped: ReturnType<typeof wrapEmbeddingModel>) => Promise<T>,
): Promise<T> {
  const store = new SqliteEventStore({ path });
  await store.init();
  try {
    const recorder = resume
      ? await SessionRecorder.resume({ store, ...address, actor })
      : new SessionRecorder({ store, ...address, actor });
    const middleware = ledgerEmbeddingMiddleware({ recorder, recordEmbeddings });
    return await work(wrapEmbeddingModel({ model, middleware }));
  } finally {
    await store.close();
  }
}

/** The user presses stop while the embedding is out. */
function stopSoon(): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 5);
  return controller.signal;
}

async function ledgerOf(path: string) {
  const store = new SqliteEventStore({ path });
  await store.init();
  try {
    return await eventsOf(store, address);
  } finally {
    await store.close();
  }
}

describe("an embedding its caller aborted, on resume", () => {
  it("is asked again (a retry of it), where a replay of the abort would end the resumed run at the same call", async () => {
    const path = join(scratch, "aborted-embed.db");
    const query = (signal?: AbortSignal) => (model: ReturnType<typeof wrapEmbeddingModel>) =>
      embed({ model, value: "what is a ledger?", maxRetries: 0, abortSignal: signal });
    const options = { model: hangingModel(), recordEmbeddings: true };
    await expect(
      inProcess(path, { resume: false, ...options }, query(stopSoon())),
    ).rejects.toMatchObject({ name: "AbortError" });
    const failed = (await ledgerOf(path)).at(-1);
    expect(failed?.type).toBe("model.failed");
    expect(failed?.metadata).toMatchObject({ aiSdk: { abortedByCaller: true } });

    const { model, calls } = embeddingModel();
    const resumed = await inProcess(path, { resume: true, model, recordEmbeddings: true }, query());
    expect(resumed.embedding).toEqual(vectorOf("what is a ledger?"));
    expect(calls).toEqual([["what is a ledger?"]]);
    const events = await ledgerOf(path);
    const retry = events.find(
      (event) => event.type === "model.requested" && event.seq > (failed?.seq ?? 0),
    );
    expect(retry?.retryOf).toBe(failed?.attemptId);
    expect(events.at(-1)?.type).toBe("model.completed");

    // Resumed once more, the retry's recorded vectors answer it: the provider is not called.
    const again = embeddingModel();
    const replayed = await inProcess(
      path,
      { resume: true, model: again.model, recordEmbeddings: true },
      query(),
    );
    expect(replayed.embedding).toEqual(vectorOf("what is a ledger?"));
    expect(again.calls).toEqual([]);
  });

  it("a retry a resume made of a call recorded without vectors, aborted by its caller, is asked again by the next resume", async () => {
    const path = join(scratch, "aborted-retry.db");
    const documents = (signal?: AbortSignal) => (model: ReturnType<typeof wrapEmbeddingModel>) =>
      embedMany({
        model,
        values: ["a ledger records", "calls that went out"],
        maxRetries: 0,
        abortSignal: signal,
      });
    // Recorded without the vectors: each resume embeds the documents again, as a retry.
    await inProcess(path, { resume: false, model: embeddingModel().model }, documents());
    // The first resume's retry is out when the user presses stop.
    await expect(
      inProcess(path, { resume: true, model: hangingModel() }, documents(stopSoon())),
    ).rejects.toMatchObject({ name: "AbortError" });

    const { model, calls } = embeddingModel();
    const resumed = await inProcess(path, { resume: true, model }, documents());
    expect(resumed.embeddings).toEqual([
      vectorOf("a ledger records"),
      vectorOf("calls that went out"),
    ]);
    expect(calls).toEqual([["a ledger records", "calls that went out"]]);
    const requested = (await ledgerOf(path)).filter((event) => event.type === "model.requested");
    // One chain of attempts: the first call, the aborted retry, the retry of that.
    expect(requested).toHaveLength(3);
    expect(requested[1]?.retryOf).toBe(requested[0]?.attemptId);
    expect(requested[2]?.retryOf).toBe(requested[1]?.attemptId);
  });
});
