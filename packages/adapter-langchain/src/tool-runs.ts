import {
  type Attempt,
  type JsonValue,
  LedgerError,
  type SessionRecorder,
  type ToolEffect,
  UnresolvedAttemptError,
} from "@agent-ledger/core";
import { langchainMetadata } from "./langchain-metadata.js";
import { retryLive } from "./model-retry.js";
import { type NestedRefusals, nestedRefusal, settleRefused } from "./nested-refusal.js";
import { toJsonValue } from "./plain-json.js";
import type { RunTree, ToolRun } from "./run-tree.js";
import { requestToolCall, type ToolCallBook } from "./tool-request.js";

/** A tool call (or a retriever's query) the handler records, as its start callback gives it. */
export interface ToolStart {
  name: string;
  args: JsonValue;
  effect: ToolEffect;
  toolCallId: string | undefined;
  /** The tool call this one is made inside (a nested call), if any. */
  outer: ToolRun | undefined;
  /** The LangGraph thread it runs in, if any. */
  threadId: string | undefined;
}

/** What the handler shares with its tool runs. */
export interface ToolRunsContext {
  recorder: () => Promise<SessionRecorder>;
  book: ToolCallBook;
  /** The chains and tools in progress, with their parents. */
  runs: RunTree;
  /** The nested calls the ledger refused, by the tool call they were made in. */
  refusals: NestedRefusals;
}

/**
 * The tool calls the handler records itself (those ledgerMiddleware does not), each attempt
 * kept under LangChain's `runId` from its start callback to its end or error.
 */
export class ToolRuns {
  readonly #attempts = new Map<string, Attempt>();
  /** For each tool call recorded here that is made inside another: that call. */
  readonly #outers = new Map<string, ToolRun>();
  readonly #context: ToolRunsContext;

  constructor(context: ToolRunsContext) {
    this.#context = context;
  }

  /**
   * Records a tool call's start and keeps its attempt under LangChain's `runId`. On a resumed
   * run a call the ledger holds runs again only if it is idempotent (the callback cannot answer
   * it from the ledger).
   */
  async started(
    call: ToolStart,
    ids: { runId: string; parentRunId?: string; tags?: string[]; langchainToolCallId?: string },
  ): Promise<void> {
    const { name, args, effect, toolCallId, outer, threadId } = call;
    const { runId, parentRunId, tags, langchainToolCallId } = ids;
    const { book, runs, refusals } = this.#context;
    const recorder = await this.#context.recorder();
    const callMetadata = langchainMetadata({ runId, parentRunId, tags, threadId });
    let attempt: Attempt;
    try {
      attempt = await requestToolCall(recorder, book, {
        name,
        args,
        effect,
        toolCallId,
        threadId,
        ...(outer
          ? { outerRequestedEventId: outer.requestedEventId ?? null, outerStepId: outer.stepId }
          : {}),
        metadata: callMetadata,
      });
      if (attempt.replayed) {
        // The callback cannot answer a tool from the ledger (ledgerMiddleware can): run an
        // idempotent tool again, refuse to repeat one that may have an effect.
        if (!effect.idempotent) {
          throw new UnresolvedAttemptError(
            `tool call ${name}${toolCallId ? ` (${toolCallId})` : ""} was already ${attempt.replayed.status} before the process restarted; it is not idempotent, so it is not run again. ${outer ? "It is called by another tool: only that tool's call can be answered from the ledger (declare it idempotent only if running it again is safe)." : "Use ledgerMiddleware to answer it from the ledger, or in a plain graph answer it through the graph's state (README: Plain LangGraph graphs)."}`,
            { attemptId: attempt.attemptId, toolCallId: toolCallId ?? null, name },
            attempt,
          );
        }
        attempt = await retryLive(recorder, attempt, callMetadata);
      }
    } catch (error) {
      // Refused inside another call: that call did not fail, the ledger stopped it. Whoever
      // records it (this handler or ledgerMiddleware) hears of it as it ends (settleRefused).
      if (outer?.requestedEventId !== undefined && LedgerError.isInstance(error))
        refusals.note(outer.requestedEventId, nestedRefusal(error, name));
      throw error;
    }
    this.#attempts.set(runId, attempt);
    if (outer) this.#outers.set(runId, outer);
    runs.started(runId, parentRunId, {
      langchainToolCallId,
      requestedEventId: attempt.requestedEventId,
      stepId: attempt.stepId,
    });
  }

  /** The tool call LangChain runs as `runId` returned `output` (if it is recorded here). */
  async completed(output: unknown, runId: string, parentRunId?: string): Promise<void> {
    const attempt = this.#take(runId);
    if (!attempt) return;
    const recorder = await this.#context.recorder();
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
    const recorder = await this.#context.recorder();
    await this.#settleRefused(recorder, attempt, runId);
    await recorder.toolFailed(attempt, error, {
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  #take(runId: string): Attempt | undefined {
    const attempt = this.#attempts.get(runId);
    this.#attempts.delete(runId);
    return attempt;
  }

  /**
   * A tool call this handler records, inside which the ledger refused a nested call: it ends
   * with the refusal (thrown, so that LangChain rejects the call with it), not with a recorded
   * outcome. The tool call it is made in, if any, hears of the refusal in turn.
   */
  async #settleRefused(recorder: SessionRecorder, attempt: Attempt, runId: string): Promise<void> {
    const { refusals } = this.#context;
    const outer = this.#outers.get(runId);
    this.#outers.delete(runId);
    const refusal = refusals.take(attempt.requestedEventId);
    if (!refusal) return;
    if (outer?.requestedEventId !== undefined) refusals.note(outer.requestedEventId, refusal);
    await settleRefused({ recorder, attempt, refusal, askedByModel: outer === undefined });
    throw refusal.error;
  }
}
