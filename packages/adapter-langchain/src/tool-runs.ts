import {
  type Attempt,
  type ReplayedOutcome,
  type SessionRecorder,
  UnresolvedAttemptError,
} from "@agent-ledger/core";
import { awaitedCall } from "./interrupt-pauses.js";
import { langchainMetadata } from "./langchain-metadata.js";
import { retryLive } from "./model-retry.js";
import { type NestedRefusals, settleRefused } from "./nested-refusal.js";
import { NodeRetries, retriedBeforeCrash, type StartingToolCall } from "./node-retries.js";
import { abandonCallsInside } from "./outer-decision.js";
import { toJsonValue } from "./plain-json.js";
import type { RunTree, ToolRun } from "./run-tree.js";
import { checkpointNsToRecord, type SubgraphRuns } from "./subgraph-runs.js";
import { cutOffByAbort } from "./tool-abort.js";
import type { ToolAttempt } from "./tool-attempt.js";
import {
  requestToolCall,
  type ToolCall,
  type ToolCallBook,
  type ToolCallToRecord,
} from "./tool-request.js";

/** What the handler shares with its tool runs. */
export interface ToolRunsContext {
  book: ToolCallBook;
  /** The chains and tools in progress, with their parents. */
  runs: RunTree;
  /** The nested calls the ledger refused, by the tool call they were made in. */
  refusals: NestedRefusals;
  /** The child runs of LangGraph subgraphs: where a call of one is recorded. */
  subgraphs: SubgraphRuns;
}

/**
 * The tool calls the handler records itself (those ledgerMiddleware does not), each attempt
 * kept under LangChain's `runId` from its start callback to its end or error.
 */
export class ToolRuns {
  readonly #attempts = new Map<string, Attempt>();
  /** Each tool call a model asked for that is in progress, by LangChain runId (see NodeRetries). */
  readonly #asked = new Map<string, StartingToolCall>();
  readonly #retries = new NodeRetries();
  /**
   * For each tool call recorded here that runs inside another tool call: that call, and whether
   * the tool called it itself (`nested`) rather than a sub-agent's model asking for it.
   */
  readonly #inside = new Map<string, { tool: ToolRun; nested: boolean }>();
  readonly #context: ToolRunsContext;

  constructor(context: ToolRunsContext) {
    this.#context = context;
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return {
      toolAttempts: this.#attempts.size,
      toolsAsked: this.#asked.size,
      toolsInside: this.#inside.size,
      toolEnds: this.#retries.kept,
    };
  }

  /** Records a tool call's start and keeps its attempt under LangChain's `runId`. */
  async started(
    call: ToolCall,
    ids: {
      runId: string;
      parentRunId?: string;
      tags?: string[];
      langchainToolCallId?: string;
      /** LangChain's metadata of the call: its thread and checkpoint namespace. */
      lsMetadata?: Record<string, unknown> | undefined;
    },
  ): Promise<void> {
    const { runId, parentRunId, tags, langchainToolCallId, lsMetadata } = ids;
    const { runs, refusals } = this.#context;
    // The running tool call it is made inside: the tool's own call (`call.outer`), or one a
    // sub-agent makes that the tool runs, which keeps its own id and cause (no `call.outer`)
    // but is part of what the tool's call did, as ledgerMiddleware's calls of a sub-agent are:
    // recorded in that call's run, run again by its approval, refused as no outcome of it.
    const insideTool = runs.enclosingTool(parentRunId);
    const { recorder, scope } = await this.#context.subgraphs.recordedIn({
      metadata: lsMetadata,
      insideTool,
    });
    const checkpointNs = checkpointNsToRecord(lsMetadata);
    const { threadId } = call;
    const metadata = {
      ...langchainMetadata({ runId, parentRunId, tags, threadId, checkpointNs }),
      ...(call.toolType !== undefined ? { toolType: call.toolType } : {}),
    };
    const { book } = this.#context;
    const asked: StartingToolCall | undefined = call.outer
      ? undefined
      : { ...call, cause: book.causes.causeOf(call.threadId, call.toolCallId, call) };
    // Run again with its task after it completed (a sibling threw, the node's retryPolicy ran
    // the task again): not idempotent, it must not take effect twice. Nothing is recorded.
    const completed = asked && this.#retries.completed(recorder, asked);
    if (completed)
      throw refusedFinished(
        call,
        completed,
        { status: "completed" },
        "LangGraph's retryPolicy ran its task again",
        RUN_AGAIN_BY_TASK,
      );
    // Run again by the graph after it threw (a node's retryPolicy): a retry of that attempt.
    const retried = asked && this.#retries.retried(recorder, asked);
    let requested: ToolAttempt;
    try {
      requested = retried
        ? { attempt: await recorder.retry(retried, { metadata }), approved: false }
        : await this.#request({ recorder, call: { ...call, metadata }, insideTool });
    } catch (error) {
      // Refused inside another call: that call did not fail, the ledger stopped it. Whoever
      // records it (this handler or ledgerMiddleware) hears of it as it ends (settleRefused),
      // also when a sub-agent's tool node caught the refusal and the tool went on.
      refusals.noteInside(insideTool, error, call.name);
      throw error;
    }
    const { attempt, approved } = requested;
    this.#attempts.set(runId, attempt);
    if (asked) this.#asked.set(runId, asked);
    if (insideTool) this.#inside.set(runId, { tool: insideTool, nested: call.outer !== undefined });
    runs.started(runId, parentRunId, {
      langchainToolCallId,
      requestedEventId: attempt.requestedEventId,
      stepId: attempt.stepId,
      approved,
      awaited: awaitedCall(attempt),
      scope,
    });
  }

  /**
   * Records a tool call's request. On a resumed run a call the ledger holds runs again only if
   * it is idempotent, or made inside a call a person approved to run again (see
   * `requestInsideDecision`; `insideTool`, the running tool call it is made inside, if any):
   * the callback cannot answer it from the ledger.
   */
  async #request(options: {
    recorder: SessionRecorder;
    call: ToolCallToRecord;
    insideTool: ToolRun | undefined;
  }): Promise<ToolAttempt> {
    const { recorder, call, insideTool } = options;
    const { effect, outer, metadata } = call;
    let requested = await requestToolCall(recorder, this.#context.book, { ...call, insideTool });
    let { attempt } = requested;
    if (retriedBeforeCrash(recorder, attempt)) {
      do attempt = await recorder.retry(attempt, { metadata });
      while (retriedBeforeCrash(recorder, attempt));
      requested = { attempt, approved: false };
    }
    const replayed = attempt.replayed;
    if (!replayed) return requested;
    if (effect.idempotent)
      return { attempt: await retryLive(recorder, attempt, metadata), approved: false };
    // Abandoned by a person, it does not run again, nor does anything made inside it.
    if (replayed.status === "abandoned")
      await abandonCallsInside(recorder, attempt, replayed.reason);
    throw refusedFinished(
      call,
      attempt,
      replayed,
      "the run was resumed",
      howToGoOn(replayed, outer !== undefined),
    );
  }

  /** An invocation in the thread (undefined: outside one) ended (see NodeRetries). */
  invocationEnded(threadId: string | undefined): void {
    this.#retries.forget(threadId);
  }

  /** The tool call LangChain runs as `runId` returned `output` (if it is recorded here). */
  async completed(output: unknown, runId: string, parentRunId?: string): Promise<void> {
    const attempt = this.#take(runId);
    if (!attempt) return;
    const recorder = await this.#context.subgraphs.recorderOf(attempt);
    this.#ended(recorder, runId, attempt);
    // A result made without a call the ledger refused (the tool caught the refusal) is no
    // answer either: the call ends as a refused one.
    await this.#settleRefused(recorder, attempt, runId);
    await recorder.toolCompleted(attempt, toJsonValue(output), {
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  /** The tool call LangChain runs as `runId` threw `error` (if it is recorded here). */
  async failed(error: unknown, runId: string, parentRunId?: string): Promise<void> {
    const attempt = this.#take(runId);
    if (!attempt) return;
    const recorder = await this.#context.subgraphs.recorderOf(attempt);
    const asked = this.#ended(recorder, runId, attempt);
    await this.#settleRefused(recorder, attempt, runId);
    // Cut off by an abort, the call has no outcome (it may still take effect): it stays
    // unresolved, and a resume asks before repeating it, as ledgerMiddleware leaves it.
    if (cutOffByAbort(error)) return;
    await recorder.toolFailed(attempt, error, {
      metadata: langchainMetadata({ runId, parentRunId }),
    });
    if (asked) this.#retries.ended(recorder, asked, attempt, error);
  }

  /**
   * A call ended; returns it if a model asked for it. Until a failure is recorded for it, no
   * run of it again is a retry (NodeRetries).
   */
  #ended(recorder: SessionRecorder, runId: string, attempt: Attempt): StartingToolCall | undefined {
    const asked = this.#asked.get(runId);
    this.#asked.delete(runId);
    if (asked) this.#retries.ended(recorder, asked, attempt);
    return asked;
  }

  #take(runId: string): Attempt | undefined {
    const attempt = this.#attempts.get(runId);
    this.#attempts.delete(runId);
    return attempt;
  }

  /**
   * A tool call this handler records, inside which the ledger refused a nested call: it ends
   * with the refusal (thrown, so that LangChain rejects the call with it), not with a recorded
   * outcome. The tool call it runs inside, if any, hears of the refusal in turn: the one that
   * called it, or the one running the sub-agent that asked for it, whose tool node may catch
   * what this call throws (a sub-agent inside a sub-agent's tool): what that call returns is
   * made without the refused call too, however many tools down it was refused.
   */
  async #settleRefused(recorder: SessionRecorder, attempt: Attempt, runId: string): Promise<void> {
    const { refusals } = this.#context;
    const inside = this.#inside.get(runId);
    this.#inside.delete(runId);
    const refusal = refusals.take(attempt.requestedEventId);
    if (!refusal) return;
    const outer = inside?.tool.requestedEventId;
    if (outer !== undefined) refusals.note(outer, refusal);
    await settleRefused({ recorder, attempt, refusal, askedByModel: inside?.nested !== true });
    throw refusal.error;
  }
}

/** A call's outcome: as the ledger answers it (`ReplayedOutcome`), or as this process saw it. */
type Outcome = { status: ReplayedOutcome["status"]; error?: unknown };

/**
 * The refusal of a non-idempotent call that already has an outcome (`outcome`, on `attempt`)
 * from before `since` (the run was resumed; LangGraph ran its task again): it is not run again,
 * and `howToGoOn` says what to do instead.
 */
function refusedFinished(
  call: Pick<ToolCall, "name" | "toolCallId">,
  attempt: Attempt,
  outcome: Outcome,
  since: string,
  howToGoOn: string,
): UnresolvedAttemptError {
  const { name, toolCallId } = call;
  return new UnresolvedAttemptError(
    `tool call ${name}${toolCallId ? ` (${toolCallId})` : ""} was already ${outcome.status}${failureText(outcome)} before ${since}; it is not idempotent, so it is not run again. ${howToGoOn}`,
    { attemptId: attempt.attemptId, toolCallId: toolCallId ?? null, name },
    attempt,
  );
}

/**
 * How to go on past a non-idempotent call that a node's retryPolicy ran again with its task
 * after it completed (a ToolNode runs a turn's calls in one task): the graph stops once the
 * policy's runs are spent.
 */
const RUN_AGAIN_BY_TASK =
  "A call of its task threw, and a ToolNode runs a turn's calls in one task: give each tool call its own task (a Send per call) so that only the call that threw runs again, or use createAgent with ledgerMiddleware, which answers recorded calls (README: A node's retryPolicy).";

/** What a recorded failure said, as ` (<message>)`; empty for any other outcome. */
function failureText(outcome: Outcome): string {
  if (outcome.status !== "failed") return "";
  const error = outcome.error as { message?: unknown } | null;
  const message = typeof error?.message === "string" ? error.message : "";
  return message === "" ? "" : ` (${message})`;
}

/**
 * How to go on past a recorded call the callback cannot answer. Answered from the ledger by
 * ledgerMiddleware, a failure the tool threw would stop the agent again on every invocation,
 * so for a failure the way on is running it again (declared idempotent) or the model's turn.
 */
function howToGoOn(replayed: ReplayedOutcome, nested: boolean): string {
  if (nested)
    return "It is called by another tool: only that tool's call can be answered from the ledger (declare it idempotent only if running it again is safe).";
  if (replayed.status === "failed")
    return "Declare the tool idempotent if running it again is safe, or give the model its failure through the graph's state: restoreMessages' toolMessages hold it (README: Plain LangGraph graphs).";
  return "Use ledgerMiddleware to answer it from the ledger, or in a plain graph answer it through the graph's state (README: Plain LangGraph graphs).";
}
