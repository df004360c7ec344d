import { type JsonObject, type SessionRecorder, withoutUrlCredentials } from "@agent-ledger/core";
import { langchainMetadata } from "./langchain-metadata.js";
import { toJsonValue } from "./plain-json.js";
import type { ToolRun } from "./run-tree.js";
import type { SubgraphRuns } from "./subgraph-runs.js";

const HIDDEN_TAG = "langsmith:hidden";

/**
 * The chains the handler records as `x.langchain.chain.*` events (custom events, not steps: a
 * LangGraph node runs several calls). Chains tagged `langsmith:hidden` (LangGraph internals)
 * are skipped; the top-level chain's inputs and outputs are kept, the password and credential
 * parameters of a URL in them `***`, as in a model request (they hold the same messages).
 */
interface RecordedChain {
  topLevel: boolean;
  /** The recorder of the run it is recorded in (its LangGraph subgraph's, if any). */
  recorder: SessionRecorder;
  /** Its `x.langchain.chain.started`, for a LangGraph node's chain (what its subgraphs are caused by). */
  node?: { eventId: string; metadata: Record<string, unknown> | undefined };
}

export class ChainEvents {
  readonly #subgraphs: SubgraphRuns;
  readonly #chains = new Map<string, RecordedChain>();
  readonly #nodeTasks = new Set<string>();

  constructor(subgraphs: SubgraphRuns) {
    this.#subgraphs = subgraphs;
  }

  async started(chain: {
    name: string;
    inputs: unknown;
    runId: string;
    parentRunId: string | undefined;
    tags: string[] | undefined;
    metadata: Record<string, unknown> | undefined;
    /** The running tool call it is made inside, if any: it is recorded in that call's run. */
    insideTool: ToolRun | undefined;
  }): Promise<void> {
    const { name, inputs, runId, parentRunId, tags, metadata, insideTool } = chain;
    if (tags?.includes(HIDDEN_TAG)) return;
    const topLevel = parentRunId === undefined;
    const { recorder } = await this.#subgraphs.recordedIn({ metadata, insideTool });
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
    const event = await recorder.record({
      type: "x.langchain.chain.started",
      payload,
      metadata: langchainMetadata({ runId, parentRunId, tags }),
    });
    const recorded: RecordedChain = { topLevel, recorder };
    if (payload.node !== undefined) {
      recorded.node = { eventId: event.eventId, metadata };
      this.#subgraphs.nodeStarted(metadata, event.eventId);
    }
    this.#chains.set(runId, recorded);
  }

  async completed(outputs: unknown, runId: string, parentRunId?: string): Promise<void> {
    const chain = this.#take(runId);
    if (!chain) return;
    const { recorder } = chain;
    const payload: JsonObject = { chainRunId: runId };
    if (chain.topLevel) payload.outputs = withoutUrlCredentials(toJsonValue(outputs));
    await recorder.record({
      type: "x.langchain.chain.completed",
      payload,
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  async failed(error: unknown, runId: string, parentRunId?: string): Promise<void> {
    const chain = this.#take(runId);
    if (!chain) return;
    await chain.recorder.record({
      type: "x.langchain.chain.failed",
      payload: { chainRunId: runId, error: toJsonValue(error) },
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  #take(runId: string): RecordedChain | undefined {
    const chain = this.#chains.get(runId);
    this.#chains.delete(runId);
    if (chain?.node) this.#subgraphs.nodeEnded(chain.node.metadata, chain.node.eventId);
    return chain;
  }
}
