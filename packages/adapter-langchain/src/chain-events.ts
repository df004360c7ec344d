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
  /**
   * The ledger run it is recorded in (its LangGraph subgraph's, if any). Its end is recorded by
   * that run's recorder as the end comes (`SubgraphRuns.recorderOf`), not by the one its start
   * was recorded by: a chain LangGraph lets run on after its invocation failed (a sub-agent
   * beside a failed tool) may end after the handler's recorder was reopened for the thread's
   * next turn, which opens the subgraph's child run again on a recorder of its own. The
   * recorder of the start would then write after that one and meet `conflict`.
   */
  ledgerRunId: string;
  /** Its `x.langchain.chain.started`, for a LangGraph node's chain (what its subgraphs are caused by). */
  node?: { eventId: string; metadata: Record<string, unknown> | undefined };
}

export class ChainEvents {
  readonly #subgraphs: SubgraphRuns;
  readonly #runs: RunTree;
  readonly #chains = new Map<string, RecordedChain>();
  /**
   * The chains forgotten as left without an end when the last invocation in progress ended
   * (`forgetLeft`), until it ends again. Most are a sub-agent's that LangGraph lets run on
   * after a task beside its tool failed the step: it finishes the node it is in, whose chains
   * then end, while its graph's chain never does. Their ends are recorded as they come;
   * those that did not end by the next time are never heard of again.
   */
  #left = new Map<string, RecordedChain>();
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
    return { chains: this.#chains.size, chainsLeft: this.#left.size, nodeTasks };
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
    const recorded: RecordedChain = { topLevel, ledgerRunId: recorder.runId };
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

  /**
   * The runs `runIds` were left without an end as the last invocation in progress ended (see
   * `forgetRunsLeft`): their chains are kept until it ends again (`#left`), in case their end
   * still comes; those left the time before are forgotten.
   */
  forgetLeft(runIds: readonly string[]): void {
    this.#left = new Map();
    for (const runId of runIds) {
      const chain = this.#take(runId);
      if (chain) this.#left.set(runId, chain);
      this.#nodeTasks.delete(runId);
    }
  }

  async completed(outputs: unknown, runId: string, parentRunId?: string): Promise<void> {
    const chain = this.#take(runId);
    if (!chain) return;
    const recorder = await this.#recorderOf(chain);
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
    const recorder = await this.#recorderOf(chain);
    await recorder.record({
      type: "x.langchain.chain.failed",
      payload: { chainRunId: runId, error: toJsonValue(error) },
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  /** The recorder that writes the run `chain` is recorded in now. */
  #recorderOf(chain: RecordedChain): Promise<SessionRecorder> {
    return this.#subgraphs.recorderOf({ runId: chain.ledgerRunId });
  }

  #take(runId: string): RecordedChain | undefined {
    const chain = this.#chains.get(runId) ?? this.#left.get(runId);
    this.#chains.delete(runId);
    this.#left.delete(runId);
    if (chain?.node) this.#subgraphs.nodeEnded(chain.node.metadata, chain.node.eventId);
    return chain;
  }
}
