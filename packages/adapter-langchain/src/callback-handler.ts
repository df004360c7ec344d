import {
  type Actor,
  type Attempt,
  type EventStore,
  hashJson,
  type JsonObject,
  type JsonValue,
  LedgerError,
  type LedgerEvent,
  type ReplayCursor,
  SessionRecorder,
  type ToolEffect,
  UnresolvedAttemptError,
} from "@agent-ledger/core";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { DocumentInterface } from "@langchain/core/documents";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGenerationChunk, GenerationChunk, LLMResult } from "@langchain/core/outputs";
import type { ChainValues } from "@langchain/core/utils/types";
import { chatRequest, modelResponse, textRequest } from "./model-request.js";
import { ModelRetries, retryLive, supersedeInFlight } from "./model-retry.js";
import {
  type NestedRefusal,
  NestedRefusals,
  nestedRefusal,
  settleRefused,
} from "./nested-refusal.js";
import {
  abandonModelCallsLeftByCrash,
  ModelCallsInProgress,
  streamLeftUnfinished,
} from "./open-model-calls.js";
import { checkHandlerOptions } from "./option-checks.js";
import { isRecord, parseToolInput, toJsonValue } from "./plain-json.js";
import { RunTree, type ToolRun } from "./run-tree.js";
import { beforeToolCall } from "./tool-attempt.js";
import { ledgerToolCallId, takeUnnamedClaim } from "./tool-claim.js";
import { retrieverEffect, toolEffect } from "./tool-effect.js";

/** Options of `LedgerCallbackHandler`: an existing recorder, or a store and a session. */
export type LedgerCallbackHandlerOptions =
  | { recorder: SessionRecorder; recordChains?: boolean }
  | {
      store: EventStore;
      sessionId: string;
      /** Give the same runId in a resumed process: the handler then continues that run. */
      runId?: string;
      actor?: Actor;
      recordChains?: boolean;
    };

function contentKey(name: string, args: JsonValue): string {
  return `${name}\u0000${hashJson(args)}`;
}

/** The `signal` LangChain hands a model call in its start callback's extra params, if any. */
function signalOf(extraParams: Record<string, unknown> | undefined): AbortSignal | undefined {
  const options = extraParams?.options;
  const signal = isRecord(options) ? options.signal : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}

const DEFAULT_ACTOR: Actor = { type: "agent", id: "langchain", framework: "langchain" };
const HIDDEN_TAG = "langsmith:hidden";

interface HandlerState {
  options: LedgerCallbackHandlerOptions;
  recorder: Promise<SessionRecorder> | undefined;
  /** The model calls in progress, with what they streamed (to close one left unfinished). */
  models: ModelCallsInProgress;
  retries: ModelRetries;
  tools: Map<string, Attempt>;
  /** For each tool call the handler records that is made inside another: that call. */
  toolOuters: Map<string, ToolRun>;
  /** The nested calls the ledger refused, by the tool call they were made in. */
  refusals: NestedRefusals;
  /** The chains and tools in progress, with their parents. */
  runs: RunTree;
  chains: Map<string, { topLevel: boolean }>;
  nodeTasks: Set<string>;
  /**
   * Tool calls the middleware records itself (the handler then leaves them alone), with the
   * eventId of the `tool.requested` the middleware committed for each.
   */
  claimed: Map<string, string | undefined>;
  /** toolCallId -> eventId of the model.completed that asked for it. */
  causes: Map<string, string>;
  /** The same for tool calls without a (ledger) id, by name and arguments. */
  contentCauses: Map<string, string>;
}

function langchainMetadata(fields: Record<string, unknown>): JsonObject {
  const langchain: JsonObject = {};
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) langchain[key] = toJsonValue(value);
  }
  return { langchain };
}

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

  constructor(options: LedgerCallbackHandlerOptions | LedgerCallbackHandler) {
    super({ _awaitHandler: true, raiseError: true });
    this.awaitHandlers = true;
    this.raiseError = true;
    // BaseCallbackHandler.copy() calls `new this.constructor(this)`: share the state.
    if (options instanceof LedgerCallbackHandler) {
      this.#state = options.#state;
      return;
    }
    checkHandlerOptions(options);
    this.#state = {
      options,
      recorder: undefined,
      models: new ModelCallsInProgress((runId, attempt, error, partial) =>
        this.#closeUnfinished(runId, attempt, error, partial),
      ),
      retries: new ModelRetries(),
      tools: new Map(),
      toolOuters: new Map(),
      refusals: new NestedRefusals(),
      runs: new RunTree(),
      chains: new Map(),
      nodeTasks: new Set(),
      claimed: new Map(),
      causes: new Map(),
      contentCauses: new Map(),
    };
  }

  /** The recorder (created, or resumed when `runId` names a run in the store, on first use). */
  getRecorder(): Promise<SessionRecorder> {
    const state = this.#state;
    if (!state.recorder) {
      state.recorder = this.#open().catch((error: unknown) => {
        state.recorder = undefined;
        throw error;
      });
    }
    return state.recorder;
  }

  async #open(): Promise<SessionRecorder> {
    const options = this.#state.options;
    let recorder: SessionRecorder | undefined;
    if ("recorder" in options) recorder = options.recorder;
    else {
      const actor = options.actor ?? DEFAULT_ACTOR;
      const address = { store: options.store, sessionId: options.sessionId, actor };
      if (options.runId !== undefined) {
        const head = await options.store.runHead({
          sessionId: options.sessionId,
          runId: options.runId,
        });
        if (head.exists)
          recorder = await SessionRecorder.resume({ ...address, runId: options.runId });
      }
      recorder ??= new SessionRecorder({
        ...address,
        ...(options.runId !== undefined ? { runId: options.runId } : {}),
      });
    }
    if (recorder.replay) this.#loadCauses(recorder.replay);
    await recorder.startRun({ framework: "langchain" });
    return recorder;
  }

  // The causes of recorded tool calls: which model completion asked for each. From the run the
  // resumed recorder already read, not a second read of it.
  #loadCauses(replay: ReplayCursor): void {
    for (const { outcome: event } of replay.modelAttempts) {
      if (event?.type !== "model.completed" || !isRecord(event.payload)) continue;
      const response = event.payload.response;
      const calls =
        isRecord(response) && Array.isArray(response.toolCalls) ? response.toolCalls : [];
      this.#noteCauses(
        calls.filter((call): call is JsonObject => isRecord(call)),
        event.eventId,
      );
    }
  }

  // A later completion asking for the same id (or, without one, the same call) is the cause.
  #noteCauses(calls: readonly { id?: unknown; name?: unknown; args?: unknown }[], cause: string) {
    for (const call of calls) {
      const toolCallId = ledgerToolCallId(typeof call.id === "string" ? call.id : undefined);
      if (toolCallId !== undefined) this.#state.causes.set(toolCallId, cause);
      else if (typeof call.name === "string")
        this.#state.contentCauses.set(contentKey(call.name, toJsonValue(call.args)), cause);
    }
  }

  /**
   * eventId of the model completion that asked for this tool call, when known: by toolCallId,
   * or for a call without one by its name and arguments.
   */
  causeOf(
    toolCallId: string | undefined,
    call?: { name: string; args: JsonValue },
  ): string | undefined {
    if (toolCallId !== undefined) return this.#state.causes.get(toolCallId);
    return call && this.#state.contentCauses.get(contentKey(call.name, call.args));
  }

  /**
   * Called by `ledgerMiddleware`: this tool call is recorded by the middleware, not here
   * (`requestedEventId`: its `tool.requested`, what the calls made inside it are caused by).
   */
  claimToolCall(toolCallId: string, requestedEventId?: string): () => void {
    this.#state.claimed.set(toolCallId, requestedEventId);
    return () => this.#state.claimed.delete(toolCallId);
  }

  /**
   * Called by `ledgerMiddleware` as a tool call it records ends: the refusal of a call made
   * inside it (`requestedEventId`: its `tool.requested`), if the ledger refused one.
   */
  takeNestedRefusal(requestedEventId: string): NestedRefusal | undefined {
    return this.#state.refusals.take(requestedEventId);
  }

  /** Records a model call's start and keeps its attempt under LangChain's `runId`. */
  async #startModel(
    request: JsonObject,
    ids: { runId: string; parentRunId?: string; runName?: string; tags?: string[] },
    lsMetadata: Record<string, unknown> | undefined,
    extraParams: Record<string, unknown> | undefined,
  ): Promise<void> {
    const recorder = await this.getRecorder();
    const retried = this.#state.retries.retried(recorder, ids.parentRunId, request);
    // A model that a running tool calls (an LLM inside a tool) is part of that tool call, not
    // a turn of the agent: it is caused by the tool.requested it belongs to, which its metadata
    // names too (`insideTool`, what restoreMessages skips it by, in ledgers of any version).
    const insideTool = this.#state.runs.enclosingTool(ids.parentRunId)?.requestedEventId;
    const metadata = langchainMetadata({ ...ids, insideTool });
    // The provider LangChain names the model's (`ls_provider`: openai, anthropic, google_genai)
    // is in no request field: the projections read it here (gen_ai.provider.name). Metadata,
    // so the request and its hash stay what they were.
    const provider = lsMetadata?.ls_provider;
    if (typeof provider === "string" && provider.length > 0) metadata.provider = provider;
    const attempt = retried
      ? await retryLive(recorder, retried, metadata)
      : await this.#beforeModelCall(recorder, request, metadata, insideTool);
    this.#state.models.started(ids.runId, attempt, {
      parentRunId: ids.parentRunId,
      signal: signalOf(extraParams),
    });
    this.#state.retries.started(ids.runId, ids.parentRunId);
  }

  /** Records a model call that will not end by itself (see `STREAM_LEFT_UNFINISHED`). */
  async #closeUnfinished(
    runId: string,
    attempt: Attempt,
    error: Error,
    partial: JsonObject | undefined,
  ): Promise<void> {
    this.#state.retries.ended(runId, attempt);
    const recorder = await this.getRecorder();
    await recorder.modelFailed(attempt, error, {
      metadata: langchainMetadata({ runId }),
      ...(partial !== undefined ? { partial } : {}),
    });
  }

  /** The model calls made under a LangChain run that ended while they had not: left unfinished. */
  async #closeUnfinishedUnder(runId: string): Promise<void> {
    await this.#state.models.closeUnder(
      (parentRunId) => this.#state.runs.isWithin(parentRunId, runId),
      streamLeftUnfinished(`the LangChain run that made it (${runId}) ended before it`),
    );
  }

  /** Closes the model calls still open (streams left unfinished); the recorder, to close the run. */
  async #closeOpenCalls(): Promise<SessionRecorder> {
    const recorder = await this.getRecorder();
    await this.#state.models.closeAll(streamLeftUnfinished("the run was closed before it ended"));
    await abandonModelCallsLeftByCrash(recorder);
    return recorder;
  }

  /**
   * Closes the run as completed (`run.completed` with `output`). Use this rather than the
   * recorder's own: a stream left unfinished (LangChain reports no end for one) is first
   * closed as failed, with what it streamed, instead of staying unresolved on a finished run.
   */
  async completeRun(output?: unknown): Promise<LedgerEvent> {
    return (await this.#closeOpenCalls()).completeRun(output);
  }

  /** Closes the run as failed, after the model calls left unfinished (see `completeRun`). */
  async failRun(error: unknown): Promise<LedgerEvent> {
    return (await this.#closeOpenCalls()).failRun(error);
  }

  /** Closes the run as cancelled, after the model calls left unfinished (see `completeRun`). */
  async cancelRun(reason?: string): Promise<LedgerEvent> {
    return (await this.#closeOpenCalls()).cancelRun(reason);
  }

  /** The attempt a callback started under LangChain's `runId`, forgotten as the call ends. */
  #take(attempts: Map<string, Attempt>, runId: string): Attempt | undefined {
    const attempt = attempts.get(runId);
    attempts.delete(runId);
    return attempt;
  }

  /**
   * On a resumed run a model call is matched with the recorded calls by request hash. With a
   * checkpoint saver the agent restarts from its last checkpoint, not from its input, so
   * recorded calls before the first match are skipped (the checkpoint already holds them).
   */
  async #beforeModelCall(
    recorder: SessionRecorder,
    request: JsonObject,
    metadata: JsonObject,
    causedByEventId: string | undefined,
  ): Promise<Attempt> {
    let stepId: string | undefined;
    for (;;) {
      try {
        const attempt = await recorder.beforeModelCall({
          request,
          metadata,
          ...(stepId !== undefined ? { stepId } : {}),
          ...(causedByEventId !== undefined ? { causedByEventId } : {}),
        });
        // Recorded before the crash but not in the checkpoint: LangChain calls the model anyway,
        // so record that as a new attempt rather than pretending it was answered (past the
        // retries the recorded run made of it, to the end of that chain).
        if (attempt.replayed) return await retryLive(recorder, attempt, metadata);
        return attempt;
      } catch (error) {
        const replay = recorder.replay;
        if (!LedgerError.isInstance(error, "replay-divergence") || !replay) throw error;
        // The checkpoint covers the recorded calls before this one: skip to the next recorded
        // call with this request, or go live if there is none.
        const from = replay.modelAttempts.findIndex(
          (recorded) => recorded.attemptId === error.details.attemptId,
        );
        const skipped = from === -1 ? [] : replay.modelAttempts.slice(from);
        if (replay.skipModelsTo(String(error.details.requestHash))) continue;
        // Live: a call in flight at the crash that this one replaces is closed, not left open.
        stepId = await supersedeInFlight(recorder, skipped);
      }
    }
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
    await this.#startModel(
      chatRequest({ llm, messages, extraParams, metadata }),
      { runId, parentRunId, runName, tags },
      metadata,
      extraParams,
    );
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
    await this.#startModel(
      textRequest({ llm, prompts, extraParams, metadata }),
      { runId, parentRunId, runName, tags },
      metadata,
      extraParams,
    );
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
    const attempt = this.#state.models.ended(runId);
    if (!attempt) return;
    this.#state.retries.ended(runId);
    const recorder = await this.getRecorder();
    const { response, toolCalls } = modelResponse(output);
    const event = await recorder.modelCompleted(attempt, response, {
      metadata: langchainMetadata({ runId, parentRunId }),
    });
    this.#noteCauses(toolCalls, event.eventId);
  }

  override async handleLLMError(
    error: unknown,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    const attempt = this.#state.models.ended(runId);
    if (!attempt) return;
    this.#state.retries.ended(runId, attempt);
    const recorder = await this.getRecorder();
    await recorder.modelFailed(attempt, error, {
      metadata: langchainMetadata({ runId, parentRunId }),
    });
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
    const runs = this.#state.runs;
    const outer = runs.callingTool(parentRunId, langchainToolCallId);
    const toolCallId = outer ? undefined : ledgerToolCallId(langchainToolCallId);
    if (!outer) {
      const claimed = this.#state.claimed;
      const claim =
        toolCallId !== undefined
          ? claimed.has(toolCallId)
            ? { requestedEventId: claimed.get(toolCallId) }
            : undefined
          : takeUnnamedClaim();
      if (claim) {
        runs.started(runId, parentRunId, { langchainToolCallId, ...claim });
        return;
      }
    }
    const name = runName ?? (tool as { name?: string }).name ?? String(tool.id?.at(-1) ?? "tool");
    const args = parseToolInput(input);
    await this.#startTool(
      { name, args, effect: toolEffect(metadata), toolCallId, outer },
      { runId, parentRunId, tags, langchainToolCallId },
    );
  }

  /**
   * Records a tool call's start (a tool's, or a retriever's query) and keeps its attempt under
   * LangChain's `runId`. On a resumed run a call the ledger holds runs again only if it is
   * idempotent (the callback cannot answer it from the ledger).
   */
  async #startTool(
    call: {
      name: string;
      args: JsonValue;
      effect: ToolEffect;
      toolCallId: string | undefined;
      /** The tool call this one is made inside (a nested call), if any. */
      outer: ToolRun | undefined;
    },
    ids: { runId: string; parentRunId?: string; tags?: string[]; langchainToolCallId?: string },
  ): Promise<void> {
    const { name, args, effect, toolCallId, outer } = call;
    const { runId, parentRunId, tags, langchainToolCallId } = ids;
    const recorder = await this.getRecorder();
    // A call another tool makes is caused by that tool's call, not by the model completion
    // that asked for the outer one: no model asked for it, so it is in no message history.
    const cause = outer?.requestedEventId ?? this.causeOf(toolCallId, { name, args });
    const callMetadata = langchainMetadata({ runId, parentRunId, tags });
    let attempt: Attempt;
    try {
      attempt = await beforeToolCall(
        recorder,
        {
          name,
          args,
          effect,
          ...(toolCallId !== undefined ? { toolCallId } : {}),
          ...(cause !== undefined ? { causedByEventId: cause } : {}),
          metadata: callMetadata,
        },
        { nested: outer !== undefined },
      );
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
        this.#state.refusals.note(outer.requestedEventId, nestedRefusal(error, name));
      throw error;
    }
    this.#state.tools.set(runId, attempt);
    if (outer) this.#state.toolOuters.set(runId, outer);
    this.#state.runs.started(runId, parentRunId, {
      langchainToolCallId,
      requestedEventId: attempt.requestedEventId,
    });
  }

  // biome-ignore lint/suspicious/noExplicitAny: LangChain's signature
  override async handleToolEnd(output: any, runId: string, parentRunId?: string): Promise<void> {
    await this.#closeUnfinishedUnder(runId);
    this.#state.runs.ended(runId);
    const attempt = this.#take(this.#state.tools, runId);
    if (!attempt) return;
    const recorder = await this.getRecorder();
    // A result made without a call the ledger refused (the tool caught the refusal) is no
    // answer either: the call ends as a refused one.
    await this.#settleRefused(recorder, attempt, runId);
    await recorder.toolCompleted(attempt, toJsonValue(output), {
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  override async handleToolError(
    error: unknown,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    await this.#closeUnfinishedUnder(runId);
    this.#state.runs.ended(runId);
    const attempt = this.#take(this.#state.tools, runId);
    if (!attempt) return;
    const recorder = await this.getRecorder();
    await this.#settleRefused(recorder, attempt, runId);
    await recorder.toolFailed(attempt, error, {
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  /**
   * A tool call this handler records, inside which the ledger refused a nested call: it ends
   * with the refusal (thrown, so that LangChain rejects the call with it), not with a recorded
   * outcome. The tool call it is made in, if any, hears of the refusal in turn.
   */
  async #settleRefused(recorder: SessionRecorder, attempt: Attempt, runId: string): Promise<void> {
    const outer = this.#state.toolOuters.get(runId);
    this.#state.toolOuters.delete(runId);
    const refusal = this.#state.refusals.take(attempt.requestedEventId);
    if (!refusal) return;
    if (outer?.requestedEventId !== undefined)
      this.#state.refusals.note(outer.requestedEventId, refusal);
    await settleRefused({ recorder, attempt, refusal, askedByModel: outer === undefined });
    throw refusal.error;
  }

  /**
   * A retriever's query goes out like a tool call (a vector store, a search service), so it is
   * recorded as one: named after the retriever, `{ query }` as its arguments, its documents as
   * the result. A retriever reads: unless its metadata says otherwise (`effect`, `idempotent:
   * false`), a query in flight at a crash runs again on resume. A model or tool the retriever
   * calls (query rewriting) belongs to the retriever's call, as a run inside a tool's does.
   */
  override async handleRetrieverStart(
    retriever: Serialized,
    query: string,
    runId: string,
    parentRunId?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    name?: string,
  ): Promise<void> {
    await this.#startTool(
      {
        name: name ?? String(retriever?.id?.at(-1) ?? "retriever"),
        args: { query: toJsonValue(query) },
        effect: retrieverEffect(metadata),
        toolCallId: undefined,
        outer: this.#state.runs.enclosingTool(parentRunId),
      },
      { runId, parentRunId, tags },
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
    // Every chain, recorded or not: a tool may reach a tool or a model through it.
    this.#state.runs.started(runId, parentRunId);
    if (!this.#recordChains() || tags?.includes(HIDDEN_TAG)) return;
    const topLevel = parentRunId === undefined;
    this.#state.chains.set(runId, { topLevel });
    const name = runName ?? runTypeOrName ?? String(chain?.id?.at(-1) ?? "chain");
    const recorder = await this.getRecorder();
    const payload: JsonObject = { chainRunId: runId, name };
    if (topLevel) payload.inputs = toJsonValue(inputs);
    // A LangGraph node runs as a chain with nested chains carrying the same metadata: the
    // first chain of a task (one checkpoint_ns per task) is the node.
    if (typeof metadata?.langgraph_node === "string") {
      const task = String(
        metadata.langgraph_checkpoint_ns ??
          `${metadata.langgraph_node}:${String(metadata.langgraph_step)}`,
      );
      if (!this.#state.nodeTasks.has(task)) {
        this.#state.nodeTasks.add(task);
        payload.node = metadata.langgraph_node;
      }
    }
    await recorder.record({
      type: "x.langchain.chain.started",
      payload,
      metadata: langchainMetadata({ runId, parentRunId, tags }),
    });
  }

  override async handleChainEnd(
    outputs: ChainValues,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    this.#state.retries.parentEnded(runId);
    await this.#closeUnfinishedUnder(runId);
    this.#state.runs.ended(runId);
    const chain = this.#state.chains.get(runId);
    if (!chain) return;
    this.#state.chains.delete(runId);
    const recorder = await this.getRecorder();
    const payload: JsonObject = { chainRunId: runId };
    if (chain.topLevel) payload.outputs = toJsonValue(outputs);
    await recorder.record({
      type: "x.langchain.chain.completed",
      payload,
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  override async handleChainError(
    error: unknown,
    runId: string,
    parentRunId?: string,
  ): Promise<void> {
    this.#state.retries.parentEnded(runId);
    await this.#closeUnfinishedUnder(runId);
    this.#state.runs.ended(runId);
    const chain = this.#state.chains.get(runId);
    if (!chain) return;
    this.#state.chains.delete(runId);
    const recorder = await this.getRecorder();
    await recorder.record({
      type: "x.langchain.chain.failed",
      payload: { chainRunId: runId, error: toJsonValue(error) },
      metadata: langchainMetadata({ runId, parentRunId }),
    });
  }

  #recordChains(): boolean {
    return this.#state.options.recordChains ?? true;
  }
}
