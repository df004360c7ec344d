import type { SessionRecorder } from "@agent-ledger/core";
import { ChainEvents } from "./chain-events.js";
import { HandlerRecorder, type LedgerCallbackHandlerOptions } from "./handler-recorder.js";
import { InterruptPauses } from "./interrupt-pauses.js";
import { ModelRuns } from "./model-runs.js";
import { NestedRefusals } from "./nested-refusal.js";
import { RefusedThreads } from "./refused-threads.js";
import { RunTree } from "./run-tree.js";
import { SubgraphRuns } from "./subgraph-runs.js";
import { ToolCallBook } from "./tool-request.js";
import { ToolRuns } from "./tool-runs.js";

/**
 * What a `LedgerCallbackHandler` keeps, shared by its copies (LangChain copies a handler per
 * run): its recorder and what it knows of the calls, chains and subgraphs in progress.
 */
export interface HandlerState {
  options: LedgerCallbackHandlerOptions;
  /** The recorder, opened on first use and opened again between invocations when needed. */
  recorder: HandlerRecorder;
  /** The model calls in progress. */
  models: ModelRuns;
  /** The tool calls the handler records (those ledgerMiddleware does not). */
  tools: ToolRuns;
  /** The nested calls the ledger refused, by the tool call they were made in. */
  refusals: NestedRefusals;
  /** The threads in which a tool call was refused: their next model call is refused too. */
  refusedThreads: RefusedThreads;
  /** The chains and tools in progress, with their parents. */
  runs: RunTree;
  chains: ChainEvents;
  /** The calls that paused at a LangGraph `interrupt()`, recorded as a pause at the end. */
  pauses: InterruptPauses;
  /** Causes, claims and resume matching of the run's tool calls. */
  book: ToolCallBook;
  /** The child runs of the LangGraph subgraphs the handler records. */
  subgraphs: SubgraphRuns;
}

/**
 * How many entries each map of a handler's state keeps, by a name of its own: what a test of a
 * handler serving many runs checks stays bounded (some are kept per thread: see each map).
 */
export function keptSizes(state: HandlerState): Readonly<Record<string, number>> {
  const { recorder, models, tools, refusals, refusedThreads, runs, chains, pauses, book } = state;
  return {
    ...recorder.kept,
    ...models.kept,
    ...tools.kept,
    refusals: refusals.kept,
    refusedThreads: refusedThreads.kept,
    ...runs.kept,
    ...chains.kept,
    ...pauses.kept,
    ...book.causes.kept,
    claims: book.claims.kept,
    ...state.subgraphs.kept,
  };
}

/**
 * Forgets the chains and tools left in the run tree as the last invocation in progress ends:
 * runs whose end LangChain never reported (a sub-agent's graph, when a task beside the tool running
 * it failed the step: LangGraph stops it without an end). A tool call or model call left so is
 * kept, to record its outcome if its end still comes, and closed with the run (`completeRun`).
 * So is a recorded chain until the last invocation in progress ends again (`forgetLeft`): the
 * node the sub-agent is in still ends, after its invocation did.
 */
export function forgetRunsLeft(state: HandlerState): void {
  const left = state.runs.inProgress();
  state.chains.forgetLeft(left);
  for (const runId of left) {
    state.pauses.ended(runId);
    state.models.parentEnded(runId);
    state.runs.ended(runId);
  }
}

/** A handler's state, its parts wired to each other, for the handler's (checked) `options`. */
export function handlerState(options: LedgerCallbackHandlerOptions): HandlerState {
  const runs = new RunTree();
  const refusals = new NestedRefusals();
  const refusedThreads = new RefusedThreads();
  const book = new ToolCallBook(
    "recorder" in options ? "recorder" : options.runId !== undefined ? "given" : "chosen",
    (): Promise<SessionRecorder> => recorder.get(),
  );
  // The causes of the tool calls a resumed run (or subgraph's child run) recorded, read with the run.
  const loadCauses = (opened: SessionRecorder) => {
    if (opened.replay) book.causes.load(opened.replay);
  };
  const root = (): Promise<SessionRecorder> => recorder.get();
  const subgraphs = new SubgraphRuns({ root, opened: loadCauses });
  const { causes, threads } = book;
  const models = new ModelRuns({ runs, causes, threads, subgraphs });
  const recorder = new HandlerRecorder(options, {
    opened: (opened) => {
      subgraphs.rootOpened(opened);
      loadCauses(opened);
    },
    quiet: () => models.settled(),
    // No node's retryPolicy runs a call of the thread again any more; settled, its calls are
    // answered, and their causes are no longer asked for.
    invocationEnded: (thread, settled) => {
      refusedThreads.forget(thread);
      tools.invocationEnded(thread);
      models.invocationEnded(thread);
      if (settled) {
        book.causes.settled(thread);
        subgraphs.invocationSettled(thread);
      }
    },
    // Its subgraphs' child runs read again too, as the handler's run was.
    threadRunAgain: (thread) => subgraphs.runAgain(thread),
  });
  const tools = new ToolRuns({ book, runs, refusals, subgraphs });
  return {
    options,
    recorder,
    models,
    tools,
    refusals,
    refusedThreads,
    runs,
    chains: new ChainEvents(subgraphs, runs),
    pauses: new InterruptPauses(runs, subgraphs),
    book,
    subgraphs,
  };
}
