import type { AwaitedCall } from "./interrupt-pauses.js";

/** A tool run in progress, recorded by the handler or by ledgerMiddleware. */
export interface ToolRun {
  /** The toolCallId LangChain started it with (its own, or one it inherited). */
  langchainToolCallId: string | undefined;
  /** eventId of its `tool.requested`, when known (what a call made inside it is caused by). */
  requestedEventId: string | undefined;
  /**
   * Its step, when known: a call made inside it is matched on resume only with the calls
   * recorded inside an attempt of this step (see `requestToolCall`).
   */
  stepId?: string | undefined;
  /**
   * It runs again because a person approved it (or a call it is made inside): the calls made
   * inside it run again too, even those not idempotent (see `ToolRuns`).
   */
  approved?: boolean | undefined;
  /**
   * The call as its `tool.requested` records it, and its ledger run: what a pause at
   * `interrupt()` names, and where.
   */
  awaited?: AwaitedCall | undefined;
  /**
   * The LangGraph subgraph invocation it is recorded in ("" for the handler's run; undefined:
   * not known, the run of what calls it): a call made inside it is recorded there too.
   */
  scope?: string | undefined;
}

/**
 * The LangChain runs in progress that the handler has seen, each with its parent: chains (also
 * those it does not record: hidden LangGraph internals, `recordChains: false`), models and
 * tools. A tool reaches another tool or a model through any number of chains
 * (`RunnableLambda`, a sub-graph...), so what a call is made inside is found by walking up
 * the whole tree, not by looking at the direct parent. A run is forgotten when it ends.
 */
export class RunTree {
  readonly #parents = new Map<string, string | undefined>();
  readonly #tools = new Map<string, ToolRun>();

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return { runs: this.#parents.size, toolRuns: this.#tools.size };
  }

  /** A run started (any kind); `tool` for a tool run. */
  started(runId: string, parentRunId: string | undefined, tool?: ToolRun): void {
    this.#parents.set(runId, parentRunId);
    if (tool) this.#tools.set(runId, tool);
  }

  /** A run ended or failed. */
  ended(runId: string): void {
    this.#parents.delete(runId);
    this.#tools.delete(runId);
  }

  /** The runs in progress (started, not ended). */
  inProgress(): string[] {
    return [...this.#parents.keys()];
  }

  /** True while the run `runId` is in progress (started, not ended). */
  running(runId: string): boolean {
    return this.#parents.has(runId);
  }

  /** The tool run `runId`, while it is in progress. */
  tool(runId: string): ToolRun | undefined {
    return this.#tools.get(runId);
  }

  /** The run at the top of the tree `runId` is in (an invocation), `runId` if it has no parent. */
  rootOf(runId: string): string {
    let root = runId;
    for (const current of this.#ancestry(runId)) root = current;
    return root;
  }

  /** True when `runId` is `ancestor` or runs (at any depth) under it. */
  isWithin(runId: string | undefined, ancestor: string): boolean {
    for (const current of this.#ancestry(runId)) if (current === ancestor) return true;
    return false;
  }

  /** The nearest running tool that a run starting under `parentRunId` is inside, if any. */
  enclosingTool(parentRunId: string | undefined): ToolRun | undefined {
    for (const runId of this.#ancestry(parentRunId)) {
      const tool = this.#tools.get(runId);
      if (tool) return tool;
    }
    return undefined;
  }

  /** `runId`, then its parent, and so on up (each once: a cycle in LangChain's ids ends it). */
  *#ancestry(runId: string | undefined): Generator<string> {
    const seen = new Set<string>();
    for (let current = runId; current !== undefined && !seen.has(current); ) {
      seen.add(current);
      yield current;
      current = this.#parents.get(current);
    }
  }

  /**
   * The running tool that a tool starting under `parentRunId` is called by, or undefined for a
   * tool call of a model. A tool that calls another with its own config (callbacks and all)
   * also hands it its `toolCall`: LangChain then starts the inner tool with the outer call's
   * toolCallId, which is no id of the inner call (and ledgerMiddleware's claim on it is the
   * outer call's). A tool that a sub-agent's tool node runs inside a tool gets its own model's
   * id: it keeps it, and is no nested call.
   */
  callingTool(
    parentRunId: string | undefined,
    langchainToolCallId: string | undefined,
  ): ToolRun | undefined {
    const outer = this.enclosingTool(parentRunId);
    if (!outer) return undefined;
    return langchainToolCallId === undefined || langchainToolCallId === outer.langchainToolCallId
      ? outer
      : undefined;
  }
}
