import {
  type Attempt,
  type JsonValue,
  LedgerError,
  type LedgerEvent,
  type SessionRecorder,
} from "@agent-ledger/core";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { DocumentInterface } from "@langchain/core/documents";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGenerationChunk, GenerationChunk, LLMResult } from "@langchain/core/outputs";
import type { ChainValues } from "@langchain/core/utils/types";
import { chainCompleted, chainFailed, chainStarted } from "./chain-callbacks.js";
import type { LedgerCallbackHandlerOptions } from "./handler-recorder.js";
import { forgetRunsLeft, type HandlerState, handlerState, keptSizes } from "./handler-state.js";
import { awaitedCall } from "./interrupt-pauses.js";
import { threadIdOf } from "./langchain-metadata.js";
import { isMisdirectedRefusal, MisdirectedRun } from "./misdirected-run.js";
import { chatModelStarted, llmStarted } from "./model-callbacks.js";
import { type NestedRefusal, nestedRefusal } from "./nested-refusal.js";
import { checkHandlerOptions } from "./option-checks.js";
import type { StructuredOutputNote } from "./structured-output-note.js";
import { closeSubgraphRuns } from "./subgraph-runs.js";
import type { ToolAttempt } from "./tool-attempt.js";
import { retrieverCall, toolCompleted, toolFailed, toolStarted } from "./tool-callbacks.js";
import type { ClaimedCall } from "./tool-claim.js";
import { requestToolCall, type ToolCallToRecord } from "./tool-request.js";

export type { LedgerCallbackHandlerOptions } from "./handler-recorder.js";

/** The state of a handler, read by `keptBy` (set by the class: its field is private). */
let stateOf: (handler: LedgerCallbackHandler) => HandlerState;

/**
 * A LangChain callback handler that records every chat/LLM call and tool call in the ledger
 * (§9). It is awaited and raising: a `*.requested` event that cannot be committed rejects the
 * call before the model or tool runs. Under `createAgent`, add `ledgerMiddleware({ handler })`
 * too: the tool node turns callback errors into ToolMessages, the middleware can stop a tool.
 */
export class LedgerCallbackHandler extends BaseCallbackHandler {
  name = "agent-ledger";
  override awaitHandlers = true;
  override raiseError = true;
  readonly #state: HandlerState;
  /** A refusal of the handler's new run as not the thread's: it is closed when idle. */
  readonly #misdirected = new MisdirectedRun();

  static {
    stateOf = (handler) => handler.#state;
  }

  constructor(options: LedgerCallbackHandlerOptions | LedgerCallbackHandler) {
    super({ _awaitHandler: true, raiseError: true });
    this.awaitHandlers = true;
    this.raiseError = true;
    // BaseCallbackHandler.copy() calls `new this.constructor(this)`: share the state.
    if (options instanceof LedgerCallbackHandler) {
      this.#state = options.#state;
      return;
    }
    this.#state = handlerState(checkHandlerOptions(options));
  }

  /**
   * The recorder (created, or resumed when `runId` names a run in the store, on first use). A
   * recorder the handler made is made again between two invocations when the run took a
   * person's decision meanwhile, or LangGraph runs part of the last invocation again: call this
   * again rather than keeping the recorder across invocations.
   */
  getRecorder(): Promise<SessionRecorder> {
    return this.#state.recorder.get();
  }

  #starts(
    runId: string,
    parentRunId: string | undefined,
    metadata: Record<string, unknown> | undefined,
    start: () => Promise<void>,
  ) {
    return this.#state.recorder.runStarts(runId, parentRunId, metadata, start);
  }

  /**
   * Runs the end callback of LangChain's run `runId`. A run that paused at `interrupt()` is
   * noted first (while the run tree knows it); an invocation that ended paused records its
   * pause after its own end. Once the last invocation in progress ended, the runs LangChain left
   * without an end are forgotten (`forgetRunsLeft`).
   */
  async #ends(runId: string, end: () => Promise<void>, failure?: { error: unknown }) {
    const { pauses, chains, recorder } = this.#state;
    const invocation = recorder.isInvocation(runId);
    try {
      await recorder.runEnds(
        runId,
        async () => {
          pauses.ended(runId, failure?.error);
          try {
            await end();
          } finally {
            chains.runEnded(runId);
          }
          await pauses.invocationEnded(runId, failure?.error);
        },
        failure,
      );
    } finally {
      if (invocation && recorder.idle) forgetRunsLeft(this.#state);
    }
    if (invocation && recorder.idle)
      await this.#misdirected.invocationEnded(recorder, (reason) => this.cancelRun(reason));
  }

  /**
   * Called by `ledgerMiddleware`: this tool call (of the LangGraph thread `threadId`, if any)
   * is recorded by the middleware, not here (`requestedEventId`: its `tool.requested`, what the
   * calls made inside it are caused by; `stepId`: its step, what they are matched by on resume;
   * `approved`: it runs again by a person's approval, which covers the calls made inside it).
   */
  claimToolCall(toolCallId: string, claimed: ClaimedCall, threadId?: string): () => void {
    return this.#state.book.claims.claim(threadId, toolCallId, claimed);
  }

  /**
   * Called by `ledgerMiddleware` around createAgent's model call (made under LangChain's run
   * `parentRunId`) that asks for a structured output as a tool call (`toolStrategy`): the model
   * call notes those tools' names (for a bare schema without a title, that createAgent names it
   * `extract-<n>`: `metadata.structuredOutput`), so that `restoreMessages` does not take its answer's call of
   * one for a pending tool call, also when the process died before the model node ended.
   * Returns the release.
   */
  structuredOutputTools(parentRunId: string | undefined, note: StructuredOutputNote): () => void {
    return this.#state.models.structuredOutputTools(parentRunId, note);
  }

  /**
   * Called by `ledgerMiddleware`: records a tool call's request as the handler records its own
   * (its cause, matched on resume by thread and toolCallId, refused if another run holds it).
   * `parentRunId`: LangChain's run it runs in (its tools node's). Inside a tool call a person
   * approved to run again (a sub-agent that a tool runs on this handler), it runs again with
   * that call, as a call the tool makes itself does (`requestInsideDecision`).
   */
  async requestToolCall(
    call: ToolCallToRecord,
    parentRunId?: string,
    on?: SessionRecorder,
  ): Promise<ToolAttempt> {
    const recorder = on ?? (await this.getRecorder());
    const insideTool = this.#state.runs.enclosingTool(parentRunId);
    try {
      return await requestToolCall(recorder, this.#state.book, { ...call, insideTool });
    } catch (error) {
      if (isMisdirectedRefusal(error)) await this.#misdirected.refused(this.#state, error);
      throw error;
    }
  }

  /**
   * Called by `ledgerMiddleware`: the recorder of the run that a tool call of a LangGraph node
   * (its `configurable`: thread and checkpoint namespace), made under LangChain's run
   * `parentRunId`, is recorded in (its subgraph's child run, or the handler's run), and that
   * subgraph (`scope`, "" for the handler's run), what the calls made inside it are recorded in.
   */
  async toolRecorder(
    configurable: Record<string, unknown> | undefined,
    parentRunId: string | undefined,
  ): Promise<{ recorder: SessionRecorder; scope: string }> {
    const insideTool = this.#state.runs.enclosingTool(parentRunId);
    return this.#state.subgraphs.recordedIn({ metadata: configurable, insideTool });
  }

  /**
   * Called by `ledgerMiddleware` as a tool call it records ends: the recorder that writes the
   * run `attempt` is in now. The tool may have run while the thread's next turn reopened the
   * handler's recorder, which opens its subgraphs' runs again on recorders of their own.
   */
  recorderOf(attempt: Pick<Attempt, "runId">): Promise<SessionRecorder> {
    return this.#state.subgraphs.recorderOf(attempt);
  }

  /**
   * Called by `ledgerMiddleware`: the ledger refused (`error`) the tool call `name` that a
   * sub-agent makes inside a tool call, from LangChain's run `parentRunId` where it runs. The
   * refusal is no outcome of the outer call, as for a call the tool makes itself: whoever
   * records that call hears of it as it ends (`takeNestedRefusal`).
   */
  refusedInside(parentRunId: string | undefined, error: unknown, name: string): void {
    if (LedgerError.isInstance(error)) this.refusalGoesOut(parentRunId, nestedRefusal(error, name));
  }

  /**
   * Called by `ledgerMiddleware`: a call inside a call refused by the ledger (`refusal`) ends
   * refused in turn, from LangChain's run `parentRunId`: the tool call that runs inside another
   * (a sub-agent of that one's tool) hears of the same refusal, however many tools down it was met.
   */
  refusalGoesOut(parentRunId: string | undefined, refusal: NestedRefusal): void {
    const outer = this.#state.runs.enclosingTool(parentRunId)?.requestedEventId;
    if (outer !== undefined) this.#state.refusals.note(outer, refusal);
  }

  /**
   * Called by `ledgerMiddleware`: the tool call it was handed (`request.toolCall`), asking
   * `call`, threw on `attempt` (live, or as the ledger answered it); a retry of it retries that.
   */
  toolCallThrew(toolCall: object, call: { name: string; args: JsonValue }, attempt: Attempt): void {
    this.#state.book.failures.failed(toolCall, call, attempt);
  }

  /**
   * Called by `ledgerMiddleware` before it records a tool call: the attempt made for the same
   * tool call object (a retry middleware around it calls it again) that threw, if any.
   */
  retriedToolCall(toolCall: object, call: { name: string; args: JsonValue }): Attempt | undefined {
    return this.#state.book.failures.retried(toolCall, call);
  }

  /**
   * Called by `ledgerMiddleware` as it asks a person about `attempt` (in flight at a crash)
   * through LangGraph's `interrupt(question)`: a pause on that question names the call.
   */
  askingAbout(question: object, attempt: Attempt): void {
    this.#state.pauses.asking(question, awaitedCall(attempt));
  }

  /**
   * Called by `ledgerMiddleware` as a tool call it records ends: the refusal of a call made
   * inside it (`requestedEventId`: its `tool.requested`), if the ledger refused one.
   */
  takeNestedRefusal(requestedEventId: string): NestedRefusal | undefined {
    return this.#state.refusals.take(requestedEventId);
  }

  /**
   * Closes the model calls still open (streams left unfinished), then the child runs of the
   * LangGraph subgraphs still open as `close` closes the run; the recorder, to close the run.
   */
  async #closeOpenCalls(
    close: (recorder: SessionRecorder) => Promise<LedgerEvent>,
  ): Promise<SessionRecorder> {
    const recorder = await this.getRecorder();
    await this.#state.models.closeAll(recorder);
    await closeSubgraphRuns(recorder, await this.#state.subgraphs.opened(), close);
    return recorder;
  }

  /**
   * Closes the run as completed (`run.completed` with `output`). Use this rather than the
   * recorder's own: a stream left unfinished (LangChain reports no end for one) is first
   * closed as failed, with what it streamed, instead of staying unresolved on a finished run.
   */
  async completeRun(output?: unknown): Promise<LedgerEvent> {
    const close = (recorder: SessionRecorder) => recorder.completeRun(output);
    return close(await this.#closeOpenCalls(close));
  }

  /** Closes the run as failed, after the model calls left unfinished (see `completeRun`). */
  async failRun(error: unknown): Promise<LedgerEvent> {
    const close = (recorder: SessionRecorder) => recorder.failRun(error);
    return close(await this.#closeOpenCalls(close));
  }

  /** Closes the run as cancelled, after the model calls left unfinished (see `completeRun`). */
  async cancelRun(reason?: string): Promise<LedgerEvent> {
    const close = (recorder: SessionRecorder) => recorder.cancelRun(reason);
    return close(await this.#closeOpenCalls(close));
  }

  override async handleChatModelStart(
    llm: Serialized,
    messages: BaseMessage[][],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): Promise<void> {
    const start = { llm, messages, runId, parentRunId, extraParams, tags, metadata, runName };
    await this.#starts(runId, parentRunId, metadata, () => chatModelStarted(this.#state, start));
  }

  override async handleLLMStart(
    llm: Serialized,
    prompts: string[],
    runId: string,
    parentRunId?: string,
    extraParams?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ): Promise<void> {
    const start = { llm, prompts, runId, parentRunId, extraParams, tags, metadata, runName };
    await this.#starts(runId, parentRunId, metadata, () => llmStarted(this.#state, start));
  }

  // What a stream has given so far: what a call left unfinished is closed with.
  override async handleLLMNewToken(
    token: string,
    _index: unknown,
    runId: string,
    _parentRunId?: string,
    _tags?: string[],
    fields?: { chunk?: ChatGenerationChunk | GenerationChunk },
  ): Promise<void> {
    this.#state.models.token(runId, token, fields?.chunk);
  }

  override async handleLLMEnd(
    output: LLMResult,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    await this.#ends(runId, () => this.#state.models.completed(output, runId, parentRunId));
  }

  override async handleLLMError(
    error: unknown,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    await this.#ends(runId, () => this.#state.models.failed(error, runId, parentRunId), { error });
  }

  override async handleToolStart(
    tool: Serialized,
    input: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
    langchainToolCallId?: string,
  ): Promise<void> {
    const start = { tool, input, runId, parentRunId, tags, metadata, runName, langchainToolCallId };
    try {
      await this.#starts(runId, parentRunId, metadata, () => toolStarted(this.#state, start));
    } catch (error) {
      // A call made inside another tool's call is that call's business: its refusal reaches the
      // outer call, which ends refused, or is answered by ledgerMiddleware (a nested call a
      // person abandoned: the model is meant to read why).
      if (!this.#state.runs.enclosingTool(parentRunId))
        this.#state.refusedThreads.refused(threadIdOf(metadata), error);
      if (isMisdirectedRefusal(error)) await this.#misdirected.refused(this.#state, error);
      throw error;
    }
  }

  // biome-ignore lint/suspicious/noExplicitAny: LangChain's signature
  override async handleToolEnd(output: any, runId: string, parentRunId?: string): Promise<void> {
    await this.#ends(runId, () => toolCompleted(this.#state, { output, runId, parentRunId }));
  }

  override async handleToolError(
    error: unknown,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    const end = () => toolFailed(this.#state, { error, runId, parentRunId });
    await this.#ends(runId, end, { error });
  }

  /** A retriever's query is recorded as a tool call (see `retrieverCall`). */
  override async handleRetrieverStart(
    retriever: Serialized,
    query: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    name?: string,
  ): Promise<void> {
    const call = retrieverCall(this.#state, { retriever, query, parentRunId, metadata, name });
    await this.#starts(runId, parentRunId, metadata, () =>
      this.#state.tools.started(call, { runId, parentRunId, tags, lsMetadata: metadata }),
    );
  }

  override async handleRetrieverEnd(
    documents: DocumentInterface[],
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    await this.handleToolEnd(documents, runId, parentRunId);
  }

  override async handleRetrieverError(
    error: unknown,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    await this.handleToolError(error, runId, parentRunId);
  }

  // Real argument order (PITFALLS): chain, inputs, runId, parentRunId, tags, metadata, runType, runName.
  override async handleChainStart(
    chain: Serialized,
    inputs: ChainValues,
    runId: string,
    parentRunIdOrRunType?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runTypeOrName?: string,
    runName?: string,
  ): Promise<void> {
    const parentRunId = parentRunIdOrRunType;
    const name = runName ?? runTypeOrName ?? String(chain?.id?.at(-1) ?? "chain");
    const start = { chain, inputs, runId, parentRunId, tags, metadata, name };
    await this.#starts(runId, parentRunId, metadata, () => chainStarted(this.#state, start));
  }

  override async handleChainEnd(
    outputs: ChainValues,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    await this.#ends(runId, () => chainCompleted(this.#state, { outputs, runId, parentRunId }));
  }

  override async handleChainError(
    error: unknown,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    const end = () => chainFailed(this.#state, { error, runId, parentRunId });
    await this.#ends(runId, end, { error });
  }
}

/**
 * How many entries each map of the handler's state keeps (see `keptSizes`): what a test of a
 * handler serving many runs checks stays bounded. Not exported from the package.
 */
export function keptBy(handler: LedgerCallbackHandler): Readonly<Record<string, number>> {
  return keptSizes(stateOf(handler));
}
