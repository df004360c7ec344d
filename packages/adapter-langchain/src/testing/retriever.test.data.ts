import type { CallbackManagerForRetrieverRun } from "@langchain/core/callbacks/manager";
import { Document } from "@langchain/core/documents";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { BaseRetriever, type BaseRetrieverInput } from "@langchain/core/retrievers";
import { LedgerCallbackHandler } from "../callback-handler.js";
import { type CrashScenario, crashHere, noteEffect } from "./crash-point.js";

export const SESSION = "retriever-session";
export const RUN = "retriever-run";

/** Shelf's documents: a retriever answers a query with those whose text holds it. */
const SHELF = [
  new Document({ pageContent: "Lisbon is sunny in June", metadata: { source: "weather.md" } }),
  new Document({ pageContent: "Porto is rainy in June", metadata: { source: "weather.md" } }),
  new Document({
    pageContent: "Lisbon trams run until midnight",
    metadata: { source: "trams.md" },
  }),
];

/**
 * A retriever over a fixed shelf of documents, through LangChain's own BaseRetriever (which
 * calls the handlers). `onQuery` runs inside each query, before it answers.
 */
export class Shelf extends BaseRetriever {
  lc_namespace = ["agent_ledger", "testing"];
  readonly #onQuery: ((query: string) => Promise<void>) | undefined;

  constructor(fields: BaseRetrieverInput & { onQuery?: (query: string) => Promise<void> } = {}) {
    super(fields);
    this.#onQuery = fields.onQuery;
  }

  override async _getRelevantDocuments(query: string): Promise<Document[]> {
    await this.#onQuery?.(query);
    const words = query.toLowerCase().split(/\s+/);
    return SHELF.filter((doc) =>
      words.every((word) => doc.pageContent.toLowerCase().includes(word)),
    );
  }
}

/** A retriever that asks a chat model to rewrite the query first (as multi-query retrievers do). */
export class RewritingShelf extends BaseRetriever {
  lc_namespace = ["agent_ledger", "testing"];
  readonly #model: BaseChatModel;

  constructor(model: BaseChatModel) {
    super();
    this.#model = model;
  }

  override async _getRelevantDocuments(
    query: string,
    runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document[]> {
    const rewritten = await this.#model.invoke(`rewrite: ${query}`, {
      callbacks: runManager?.getChild("rewrite"),
    });
    return new Shelf().invoke(String(rewritten.content));
  }
}

export const retrieverCrashes = {
  /**
   * A query to the Shelf retriever is out when the process dies. args[0] = "not-idempotent"
   * declares the retriever's effect in its metadata as a write that must not run twice.
   */
  "retriever:dies-in-query": async (store, args) => {
    const handler = new LedgerCallbackHandler({ store, sessionId: SESSION, runId: RUN });
    const metadata = args[0] === "not-idempotent" ? { effect: "write", idempotent: false } : {};
    const shelf = new Shelf({
      metadata,
      onQuery: async (query) => {
        noteEffect(`query ${query}`);
        await crashHere();
      },
    });
    await shelf.invoke("lisbon", { callbacks: [handler] });
  },
} satisfies Record<string, CrashScenario>;
