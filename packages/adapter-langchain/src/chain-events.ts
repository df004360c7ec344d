import { type JsonObject, type SessionRecorder, withoutUrlCredentials } from "@agent-ledger/core";
import { langchainMetadata } from "./langchain-metadata.js";
import { toJsonValue } from "./plain-json.js";

const HIDDEN_TAG = "langsmith:hidden";

/**
 * The chains the handler records as `x.langchain.chain.*` events (custom events, not steps: a
 * LangGraph node runs several calls). Chains tagged `langsmith:hidden` (LangGraph internals)
 * are skipped; the top-level chain's inputs and outputs are kept, the password and credential
 * parameters of a URL in them `***`, as in a model request (they hold the same messages).
 */
export class ChainEvents {
  readonly #recorder: () => Promise<SessionRecorder>;
  readonly #chains = new Map<string, { topLevel: boolean }>();
  readonly #nodeTasks = new Set<string>();

  constructor(recorder: () => Promise<SessionRecorder>) {
    this.#recorder = recorder;
  }

  async started(chain: {
    name: string;
    inputs: unknown;
    runId: string;
    parentRunId: string | undefined;
    tags: string[] | undefined;
    metadata: Record<string, unknown> | undefined;
  }): Promise<void> {
    const { name, inputs, runId, parentRunId, tags, metadata } = chain;
    if (tags?.includes(HIDDEN_TAG)) return;
    const topLevel = parentRunId === undefined;
    this.#chains.set(runId, { topLevel });
    const recorder = await this.#recorder();
    const payload: JsonObject = { chainRunId: runId, name };
    if (topLevel) payload.inputs = withoutUrlCredentials(toJsonValue(inputs));
    // A LangGraph node runs as a chain with nested chains carrying the same metadata: the
    // first chain of a task (one checkpoint_ns per task) is the node.
    if (typeof metadata?.langgraph_node === "string") {
      const task = String(
        metadata.langgraph_checkpoint_ns ??
          `${metadata.langgraph_node}:${String(metadata.langgraph_step)}`,
      );
      if (!this.#nodeTasks.has(task)) {
        this.#nodeTasks.add(task);
        payload.node = metadata.langgraph_node;
      }
    }
    await recorder.record({
      type: "x.langchain.chain.started",
      payload,
      metadata: langchainMetadata({ runId, parentRunId, tags }),
    });
  }

  async completed(outputs: unknown, runId: string, parentRunId?: string): Promise<void> {
    const chain = this.#take(runId);
    if (!chain) return;
    const recorder = await this.#recorder();
    const payload: JsonObject = { chainRunId: runId };
    if (chain.topLevel) payload.outputs = withoutUrlCredentials(toJsonValue(outputs));
    await recorder.record({
      type: "x.langchain.chain.completed",
      payload,
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  async failed(error: unknown, runId: string, parentRunId?: string): Promise<void> {
    if (!this.#take(runId)) return;
    const recorder = await this.#recorder();
    await recorder.record({
      type: "x.langchain.chain.failed",
      payload: { chainRunId: runId, error: toJsonValue(error) },
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  #take(runId: string): { topLevel: boolean } | undefined {
    const chain = this.#chains.get(runId);
    this.#chains.delete(runId);
    return chain;
  }
}
