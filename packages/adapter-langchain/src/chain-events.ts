import { type JsonObject, type SessionRecorder, withoutUrlCredentials } from "@agent-ledger/core";
import { langchainMetadata } from "./langchain-metadata.js";
import { toJsonValue } from "./plain-json.js";
import type { RunTree, ToolRun } from "./run-tree.js";
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
  readonly #runs: RunTree;
  readonly #chains = new Map<string, RecordedChain>();
  /**
   * The LangGraph tasks whose node chain was recorded, by the run at the top of their tree (the
   * invocation, `RunTree.rootOf`), forgotten as that run ends: a later invocation that runs a
   * task again (a resume) records its node again, as a new process does.
   */
  readonly #nodeTasks = new Map<string, Set<string>>();

  constructor(subgraphs: SubgraphRuns, runs: RunTree) {
    this.#subgraphs = subgraphs;
    this.#runs = runs;
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    const nodeTasks = [...this.#nodeTasks.values()].reduce((sum, tasks) => sum + tasks.size, 0);
    return { chains: this.#chains.size, nodeTasks };
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
    /** The run at the top of its tree (its invocation). */
    root: string;
  }): Promise<void> {
    const { name, inputs, runId, parentRunId, tags, metadata, insideTool, root } = chain;
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
      let tasks = this.#nodeTasks.get(root);
      if (!tasks) {
        tasks = new Set();
        this.#nodeTasks.set(root, tasks);
      }
      if (!tasks.has(task)) {
        tasks.add(task);
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

  /**
   * LangChain's run `runId` ended: if chains ran under it as their invocation, it is over. So
   * are those of a chain that started after its invocation ended (a task LangGraph let run on
   * after another failed the step), kept under the run it was found under, already ended.
   */
  runEnded(runId: string): void {
    if (!this.#nodeTasks.delete(runId)) return;
    for (const root of this.#nodeTasks.keys())
      if (!this.#runs.running(root)) this.#nodeTasks.delete(root);
  }

  /** The chain `runId` will not end (see `forgetRunsLeft`): nothing is recorded for it. */
  forget(runId: string): void {
    this.#take(runId);
    this.#nodeTasks.delete(runId);
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
