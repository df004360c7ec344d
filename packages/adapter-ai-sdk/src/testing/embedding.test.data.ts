import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import { embed, embedMany, wrapEmbeddingModel } from "ai";
import { MockEmbeddingModelV3 } from "ai/test";
import { ledgerEmbeddingMiddleware } from "../embedding-middleware.js";
import { crashHere, report } from "./crash-in-child.test.data.js";
import { assistant } from "./scripted-model.test.data.js";

/** Where the embedding run records. */
export const EMBEDDING_RUN = { sessionId: "rag", runId: "index-1" };

/** A vector for `text`: the same text always gets the same one, as from a real model. */
export function vectorOf(text: string): number[] {
  return [text.length, text.charCodeAt(0) / 100, 0.5];
}

/**
 * An embedding model answering with `vectorOf`, 3 tokens per text; `onCall` runs inside each
 * call first (in a crash child: report it, and stop there).
 */
export function embeddingModel(onCall?: (values: string[]) => Promise<void>) {
  const calls: string[][] = [];
  const model = new MockEmbeddingModelV3({
    provider: "openai.embedding",
    modelId: "text-embedding-3-small",
    // Every text of an embedMany in one call, one call at a time.
    maxEmbeddingsPerCall: 16,
    supportsParallelCalls: false,
    doEmbed: async ({ values }) => {
      calls.push(values);
      await onCall?.(values);
      return {
        embeddings: values.map(vectorOf),
        usage: { tokens: values.length * 3 },
        warnings: [],
      };
    },
  });
  return { model, calls };
}

/** Embeds "what is a ledger?" (one call), then the two documents (a second call). */
export async function embedQueryThenDocuments(
  recorder: SessionRecorder,
  model: MockEmbeddingModelV3,
): Promise<number[][]> {
  const wrapped = wrapEmbeddingModel({
    model,
    middleware: ledgerEmbeddingMiddleware({ recorder }),
  });
  const query = await embed({ model: wrapped, value: "what is a ledger?", maxRetries: 0 });
  const documents = await embedMany({
    model: wrapped,
    values: ["a ledger records", "calls that went out"],
    maxRetries: 0,
  });
  return [query.embedding, ...documents.embeddings];
}

/** In the crash child: the query is embedded, then the process dies inside the second call. */
export async function crashInsideDocumentEmbedding(store: EventStore): Promise<void> {
  const recorder = new SessionRecorder({ store, ...EMBEDDING_RUN, actor: assistant });
  const { model } = embeddingModel(async (values) => {
    report.modelCall();
    if (values.length > 1) await crashHere();
  });
  await embedQueryThenDocuments(recorder, model);
}
