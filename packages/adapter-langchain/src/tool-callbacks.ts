import type { Serialized } from "@langchain/core/load/serializable";
import type { HandlerState } from "./handler-state.js";
import { threadIdOf } from "./langchain-metadata.js";
import { parseToolInput, toJsonValue } from "./plain-json.js";
import { ledgerToolCallId, takeUnnamedClaim } from "./tool-claim.js";
import { retrieverEffect, toolEffect } from "./tool-effect.js";
import type { ToolCall } from "./tool-request.js";

// What LedgerCallbackHandler does on LangChain's tool and retriever callbacks.

/** What LangChain's `handleToolStart` gives, by name. */
export interface ToolStart {
  tool: Serialized;
  input: string;
  runId: string;
  parentRunId: string | undefined;
  tags: string[] | undefined;
  metadata: Record<string, unknown> | undefined;
  runName: string | undefined;
  /** The toolCallId LangChain started it with (its own, or one it inherited). */
  langchainToolCallId: string | undefined;
}

/**
 * A tool call started. One that ledgerMiddleware records (it claimed the call) is only noted in
 * the run tree, with the call the middleware committed; any other is recorded here. A tool that
 * another tool calls with its own config gets the outer call's toolCallId, which is no id of its
 * own (`RunTree.callingTool`): it is recorded as a call made inside that one, without an id.
 */
export async function toolStarted(state: HandlerState, start: ToolStart): Promise<void> {
  const { tool, input, runId, parentRunId, tags, metadata, runName, langchainToolCallId } = start;
  const { runs } = state;
  const outer = runs.callingTool(parentRunId, langchainToolCallId);
  const toolCallId = outer ? undefined : ledgerToolCallId(langchainToolCallId);
  const threadId = threadIdOf(metadata);
  if (!outer) {
    const claim =
      toolCallId !== undefined ? state.book.claims.find(threadId, toolCallId) : takeUnnamedClaim();
    if (claim) {
      runs.started(runId, parentRunId, { langchainToolCallId, ...claim });
      return;
    }
  }
  const name = runName ?? (tool as { name?: string }).name ?? String(tool.id?.at(-1) ?? "tool");
  await state.tools.started(
    {
      name,
      args: parseToolInput(input),
      effect: toolEffect(metadata),
      toolCallId,
      outer,
      threadId,
    },
    { runId, parentRunId, tags, langchainToolCallId, lsMetadata: metadata },
  );
}

/**
 * The tool call a retriever's query is recorded as. It goes out like a tool call (a vector
 * store, a search service): named after the retriever, `{ query }` as its arguments, its
 * documents as the result. A retriever reads: unless its metadata says otherwise (`effect`,
 * `idempotent: false`), a query in flight at a crash runs again on resume. A model or tool the
 * retriever calls (query rewriting) belongs to the retriever's call, as a run inside a tool's
 * does; a retriever inside a tool call is made inside that call.
 */
export function retrieverCall(
  state: HandlerState,
  start: {
    retriever: Serialized;
    query: string;
    parentRunId: string | undefined;
    metadata: Record<string, unknown> | undefined;
    name: string | undefined;
  },
): ToolCall {
  const { retriever, query, parentRunId, metadata, name } = start;
  return {
    name: name ?? String(retriever?.id?.at(-1) ?? "retriever"),
    args: { query: toJsonValue(query) },
    effect: retrieverEffect(metadata),
    toolCallId: undefined,
    toolType: "datastore",
    outer: state.runs.enclosingTool(parentRunId),
    threadId: threadIdOf(metadata),
  };
}

/** LangChain's tool (or retriever) run `runId` returned `output`. */
export async function toolCompleted(
  state: HandlerState,
  end: { output: unknown; runId: string; parentRunId: string | undefined },
): Promise<void> {
  await toolEnded(state, end.runId);
  await state.tools.completed(end.output, end.runId, end.parentRunId);
}

/** LangChain's tool (or retriever) run `runId` threw `error`. */
export async function toolFailed(
  state: HandlerState,
  end: { error: unknown; runId: string; parentRunId: string | undefined },
): Promise<void> {
  await toolEnded(state, end.runId);
  await state.tools.failed(end.error, end.runId, end.parentRunId);
}

/** A tool call ended: the model calls left open under it are closed (streams left unfinished). */
async function toolEnded(state: HandlerState, runId: string): Promise<void> {
  await state.models.closeUnder(runId);
  state.runs.ended(runId);
}
