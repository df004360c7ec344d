import type { Attempt, JsonObject, SessionRecorder } from "@agent-ledger/core";
import type { Serialized } from "@langchain/core/load/serializable";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGenerationChunk, GenerationChunk, LLMResult } from "@langchain/core/outputs";
import { withStableToolNames } from "./generated-tool-names.js";
import { langchainMetadata, signalOf, threadIdOf } from "./langchain-metadata.js";
import { beforeModelCall } from "./model-replay.js";
import { modelResponse } from "./model-request.js";
import { type ModelIdentity, ModelRetries, retryLive, taskOf } from "./model-retry.js";
import {
  abandonModelCallsLeftByCrash,
  ModelCallsInProgress,
  streamLeftUnfinished,
} from "./open-model-calls.js";
import { isRecord } from "./plain-json.js";
import type { RunTree } from "./run-tree.js";
import { refuseSavedRefusals } from "./saved-refusals.js";
import { StructuredOutputCalls } from "./structured-output-calls.js";
import type { StructuredOutputNote } from "./structured-output-note.js";
import { checkpointNsToRecord, type SubgraphRuns } from "./subgraph-runs.js";
import type { ThreadSessions } from "./thread-sessions.js";
import type { ToolCauses } from "./tool-causes.js";

/** What the handler shares with its model runs. */
export interface ModelRunsContext {
  /** The chains and tools in progress, with their parents. */
  runs: RunTree;
  /** Where a completion notes the tool calls it asks for. */
  causes: ToolCauses;
  /** Where the handler's session is named among those that recorded a thread. */
  threads: ThreadSessions;
  /** The child runs of LangGraph subgraphs: where a call of one is recorded. */
  subgraphs: SubgraphRuns;
}

/**
 * The model calls the handler records, each attempt kept under LangChain's `runId` from its
 * start callback to its end or error, with what it streamed (to close one left unfinished).
 */
export class ModelRuns {
  readonly #context: ModelRunsContext;
  readonly #calls: ModelCallsInProgress;
  readonly #retries = new ModelRetries();
  /** The structured output tools of the model calls to come, by the run they are made under. */
  readonly #structuredTools = new Map<string, StructuredOutputNote>();
  /** The `metadata.structuredOutput` of each model call in progress that has one. */
  readonly #structuredOutputs = new Map<string, unknown>();
  /** Structured outputs LangChain does not name in the call options (base, createAgent's). */
  readonly #structured = new StructuredOutputCalls();

  constructor(context: ModelRunsContext) {
    this.#context = context;
    this.#calls = new ModelCallsInProgress((runId, attempt, error, partial) =>
      this.#closeUnfinished(runId, attempt, error, partial),
    );
  }

  /** How many entries each of its maps keeps (see `keptBy`). */
  get kept(): Readonly<Record<string, number>> {
    return {
      ...this.#calls.kept,
      ...this.#retries.kept,
      ...this.#structured.kept,
      structuredTools: this.#structuredTools.size,
      structuredOutputs: this.#structuredOutputs.size,
    };
  }

  /** Records a model call's start and keeps its attempt under LangChain's `runId`. */
  async started(
    sent: JsonObject,
    ids: { runId: string; parentRunId?: string; runName?: string; tags?: string[] },
    call: {
      /** The model as LangChain serializes it: with the provider, what a retry is made by. */
      llm: Serialized;
      lsMetadata: Record<string, unknown> | undefined;
      extraParams: Record<string, unknown> | undefined;
      /** A chat model's prompt, its ToolMessages read on a resumed run (`refuseSavedRefusals`). */
      messages?: BaseMessage[][];
    },
  ): Promise<void> {
    const { lsMetadata, extraParams } = call;
    // A model that a running tool calls (an LLM inside a tool) is part of that tool call, not
    // a turn of the agent: it is caused by the tool.requested it belongs to, which its metadata
    // names too (`insideTool`, what restoreMessages skips it by, in ledgers of any version), and
    // recorded in that call's run. Else in its LangGraph subgraph's child run, if any.
    const enclosing = this.#context.runs.enclosingTool(ids.parentRunId);
    const insideTool = enclosing?.requestedEventId;
    const { recorder } = await this.#context.subgraphs.recordedIn({
      metadata: lsMetadata,
      insideTool: enclosing,
    });
    // Before anything is recorded or kept for it. Not inside a tool call: a call made there is
    // that call's business (its refusal reaches the outer call, which a person decides on as a
    // whole: an outer call approved covers the calls made inside it).
    if (!enclosing) refuseSavedRefusals(recorder, call.messages ?? [], threadIdOf(lsMetadata));
    // The structured output's tools of a createAgent call (ledgerMiddleware's note): their
    // generated names are recorded as placeholders, so that the call is the same request in
    // every process (a resume, a retry), whatever n createAgent gave it (README: restoreMessages).
    const structuredTools =
      ids.parentRunId !== undefined ? this.#structuredTools.get(ids.parentRunId) : undefined;
    const { generated: generatedTools, request } = structuredTools
      ? withStableToolNames(sent, structuredTools)
      : { generated: [], request: sent };
    const model: ModelIdentity = {
      llm: call.llm,
      provider: lsMetadata?.ls_provider,
      modelName: lsMetadata?.ls_model_name,
    };
    const task = taskOf(lsMetadata);
    const retried = this.#retries.retried(recorder, {
      parentRunId: ids.parentRunId,
      task,
      request,
      model,
      tags: ids.tags,
    });
    // The thread, so that on resume the tool calls this call asks for are keyed by it; the
    // checkpoint namespace, where in the graph it ran (see SubgraphRuns).
    const threadId = threadIdOf(lsMetadata);
    const checkpointNs = checkpointNsToRecord(lsMetadata);
    const metadata = langchainMetadata({ ...ids, insideTool, threadId, checkpointNs });
    // The provider LangChain names the model's (`ls_provider`: openai, anthropic, google_genai)
    // is in no request field: the projections read it here (gen_ai.provider.name). Metadata,
    // so the request and its hash stay what they were.
    const provider = lsMetadata?.ls_provider;
    if (typeof provider === "string" && provider.length > 0) metadata.provider = provider;
    // Metadata too: the tools whose call the agent answers itself (toolStrategy).
    if (structuredTools) {
      // By name, those createAgent generated for this call (a bare schema's) included.
      const tools = [...new Set([...structuredTools.tools, ...generatedTools])];
      metadata.structuredOutput = { method: "toolStrategy", tools };
      // Generated, but not in the request (a model that does not say what it binds): any tool
      // createAgent names extract-<n>, as LangChain tells them itself.
      if (structuredTools.generated === true && generatedTools.length === 0)
        metadata.structuredOutput.generated = true;
    } else if (
      request.structuredOutput === undefined &&
      this.#structured.inPipeline(ids.parentRunId)
    ) {
      // The base withStructuredOutput passes no ls_structured_output_format; it only calls
      // tools (functionCalling). Metadata, so the request's hash stays what it was.
      metadata.structuredOutput = { method: "functionCalling" };
    }
    // The names sent, in the order of the request's placeholders (extract-<n>, extract-<n+1>).
    if (generatedTools.length > 0 && isRecord(metadata.structuredOutput))
      metadata.structuredOutput.generatedTools = generatedTools;
    if (metadata.structuredOutput !== undefined)
      this.#structuredOutputs.set(ids.runId, metadata.structuredOutput);
    // Named before the thread's first call is: a resume built with another sessionId finds it.
    if (threadId !== undefined) await this.#context.threads.recording(recorder, threadId);
    const attempt = retried
      ? await retryLive(recorder, retried, metadata)
      : await beforeModelCall(recorder, request, metadata, insideTool);
    this.#calls.started(ids.runId, attempt, {
      parentRunId: ids.parentRunId,
      threadId,
      signal: signalOf(extraParams),
    });
    this.#retries.started(ids.runId, {
      parentRunId: ids.parentRunId,
      model,
      task,
      threadId,
      recorder,
    });
  }

  /** What a stream has given so far: what a call left unfinished is closed with. */
  token(runId: string, token: string, chunk: ChatGenerationChunk | GenerationChunk | undefined) {
    this.#calls.token(runId, token, chunk);
  }

  async completed(output: LLMResult, runId: string, parentRunId?: string): Promise<void> {
    const call = this.#calls.ended(runId);
    if (!call) return;
    this.#retries.ended(runId);
    const recorder = await this.#context.subgraphs.recorderOf(call.attempt);
    const { response, toolCalls } = modelResponse(output);
    const event = await recorder.modelCompleted(call.attempt, response, {
      metadata: { ...langchainMetadata({ runId, parentRunId }), ...streamedMetadata(call) },
    });
    this.#context.causes.note(toolCalls, event.eventId, call.threadId);
    this.#context.causes.noteStep(event.eventId, call.attempt.stepId);
    this.#structured.completed(parentRunId, {
      eventId: event.eventId,
      runId: event.runId,
      toolCalls: toolCalls.flatMap(({ id, name }) => (id !== undefined ? [{ id, name }] : [])),
      structuredOutput: this.#structuredOutputs.get(runId),
      threadId: call.threadId,
    });
    this.#structuredOutputs.delete(runId);
  }

  /** A model call failed: with what it streamed before, if its signal aborted it mid-stream. */
  async failed(error: unknown, runId: string, parentRunId?: string): Promise<void> {
    const call = this.#calls.ended(runId);
    if (!call) return;
    const { attempt, partial } = call;
    this.#structuredOutputs.delete(runId);
    this.#retries.ended(runId, attempt);
    const recorder = await this.#context.subgraphs.recorderOf(attempt);
    await recorder.modelFailed(attempt, error, {
      metadata: { ...langchainMetadata({ runId, parentRunId }), ...streamedMetadata(call) },
      ...(partial !== undefined ? { partial } : {}),
    });
  }

  /**
   * The model calls made under the run `parentRunId` until the release ask for a structured
   * output as a call of one of the tools `note` names, or of any tool but the agent's (see
   * `LedgerCallbackHandler`).
   */
  structuredOutputTools(parentRunId: string | undefined, note: StructuredOutputNote): () => void {
    if (parentRunId === undefined) return () => undefined;
    this.#structuredTools.set(parentRunId, note);
    return () => {
      if (this.#structuredTools.get(parentRunId) === note)
        this.#structuredTools.delete(parentRunId);
    };
  }

  /**
   * A chain started: the model calls made again under createAgent's model node are retries,
   * and those made in the base withStructuredOutput's pipeline give a structured output.
   */
  chainStarted(
    runId: string,
    runName: string,
    metadata: Record<string, unknown> | undefined,
    parentRunId: string | undefined,
    serialized: unknown,
  ): void {
    this.#retries.chainStarted(runId, runName, metadata);
    this.#structured.chainStarted(runId, runName, parentRunId, serialized);
  }

  /** A chain ended with `outputs`: createAgent's model node may have answered a structured output. */
  async chainCompleted(outputs: unknown, runId: string): Promise<void> {
    await this.#structured.answered(
      (run) => this.#context.subgraphs.recorderOf(run),
      runId,
      outputs,
    );
  }

  /** An invocation in the thread (undefined: outside one) ended (see `ModelRetries.forget`). */
  invocationEnded(threadId: string | undefined): void {
    this.#retries.forget(threadId);
  }

  /** A LangChain run ended: no retry of a call that failed under it can come any more. */
  parentEnded(runId: string): void {
    this.#retries.parentEnded(runId);
    this.#structured.ended(runId);
  }

  /** The model calls made under a LangChain run that ended while they had not: left unfinished. */
  async closeUnder(runId: string): Promise<void> {
    await this.#calls.closeUnder(
      (parentRunId) => this.#context.runs.isWithin(parentRunId, runId),
      streamLeftUnfinished(`the LangChain run that made it (${runId}) ended before it`),
    );
  }

  /** Settles once the streams an abort cut off have ended or are closed, and that is recorded. */
  settled(): Promise<void> {
    return this.#calls.settled();
  }

  /** Closes the model calls still open (streams left unfinished), as the run is closed. */
  async closeAll(recorder: SessionRecorder): Promise<void> {
    await this.#calls.closeAll(streamLeftUnfinished("the run was closed before it ended"));
    await abandonModelCallsLeftByCrash(recorder);
  }

  /** Records a model call that will not end by itself (see `STREAM_LEFT_UNFINISHED`). */
  async #closeUnfinished(
    runId: string,
    attempt: Attempt,
    error: Error,
    partial: JsonObject | undefined,
  ): Promise<void> {
    this.#retries.ended(runId, attempt);
    this.#structuredOutputs.delete(runId);
    const recorder = await this.#context.subgraphs.recorderOf(attempt);
    // Closed with what it had streamed: a stream, if it streamed anything.
    await recorder.modelFailed(attempt, error, {
      metadata: {
        ...langchainMetadata({ runId }),
        ...(partial !== undefined ? { stream: true } : {}),
      },
      ...(partial !== undefined ? { partial } : {}),
    });
  }
}

/**
 * `{ stream: true }` for a call that streamed, in its outcome's metadata (what the OpenTelemetry
 * export reads for `gen_ai.request.stream`): LangChain says nothing of it when the call starts.
 */
function streamedMetadata(call: { streamed: boolean }): JsonObject {
  return call.streamed ? { stream: true } : {};
}
