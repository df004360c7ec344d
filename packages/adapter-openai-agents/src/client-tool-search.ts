import {
  canonicalJson,
  type JsonObject,
  ReplayDivergenceError,
  rebuiltError,
  type SessionRecorder,
  type ToolEffect,
} from "@agent-ledger/core";
import {
  attachClientToolSearchExecutor,
  type ClientToolSearchExecutor,
  type ClientToolSearchExecutorResult,
  getClientToolSearchExecutor,
  type HostedTool,
} from "@openai/agents";
import { ledgerTool } from "./ledger-tool.js";
import { recordedOutput } from "./model-json.js";
import { callContext } from "./recorded-tool-call.js";
import { currentScope, ledgerStep, recorderOf, refused } from "./scope.js";
import { toolCallName } from "./tool-call-names.js";

// A tool search the SDK runs in the process (`toolSearchTool({ execution: "client", execute })`)
// is a call of the process: the app's `execute` may query a registry over the network. It is
// recorded as a tool call of its run, as a function tool's is. The SDK's built-in lookup (no
// `execute`) reads only the agent's own deferred tools and is not recorded: giving it an
// executor would move the SDK onto its custom-search path, which registers and filters tools
// otherwise.

/** The name a client tool search is recorded under: the SDK's only name for the tool. */
const TOOL_SEARCH_NAME = "tool_search";

/**
 * A search only reads, and is safe to make again: in flight at a crash, it is made again by
 * itself; answered from the ledger, it runs again too (see `recordToolSearch`).
 */
const SEARCH_EFFECT: ToolEffect = { kind: "read", idempotent: true };

/**
 * The recording callbacks recordToolSearch put in place: by callback, not by tool, so a tool
 * whose app attached another `execute` since (`attachClientToolSearchExecutor`) is known to run
 * that one unseen, and is recorded again by the next instrumentAgent.
 */
const recordingExecutors = new WeakSet<object>();

/** A client tool search tool (`toolSearchTool({ execution: "client" })`), not the provider's. */
export function isClientToolSearch(tool: { type: string; providerData?: unknown }): boolean {
  const data = tool.providerData as { type?: unknown; execution?: unknown } | undefined;
  return tool.type === "hosted_tool" && data?.type === "tool_search" && data.execution === "client";
}

/**
 * False for a client tool search whose `execute` runs unseen (added to an agent after
 * instrumentAgent, or given another `execute` since): its searches are calls of the process the
 * ledger does not record.
 */
export function searchesRecorded(tool: HostedTool): boolean {
  const executor = getClientToolSearchExecutor(tool);
  return !isClientToolSearch(tool) || !executor || recordingExecutors.has(executor);
}

// The id pairing a search's call and output items, as the SDK resolves it: the provider's
// call id, else the item's id.
function searchCallId(call: unknown): string | undefined {
  const item = (call ?? {}) as Record<string, unknown>;
  const data = (item.providerData ?? {}) as Record<string, unknown>;
  for (const id of [data.call_id, data.callId, item.call_id, item.callId, item.id])
    if (typeof id === "string" && id.length > 0) return id;
  return undefined;
}

// The tools a search's callback returned: none, one, or a list.
function toolsOf(result: ClientToolSearchExecutorResult<unknown>) {
  return result === undefined || result === null ? [] : [result].flat();
}

// What a search loaded, as JSON: the live tool objects the callback returned cannot be
// recorded, their names can (a function tool's qualified by its namespace, as the SDK routes
// calls to it; a hosted MCP server's label).
function loadedTools(result: ClientToolSearchExecutorResult<unknown>): JsonObject[] {
  return toolsOf(result).map((tool): JsonObject => {
    const data = (tool as { providerData?: { type?: unknown; server_label?: unknown } })
      .providerData;
    if (
      tool.type === "hosted_tool" &&
      data?.type === "mcp" &&
      typeof data.server_label === "string"
    )
      return { type: "mcp", server_label: data.server_label };
    return { type: tool.type, name: tool.type === "function" ? toolCallName(tool) : tool.name };
  });
}

// The function tools a search loads become the agent's tools for the rest of the run, made at
// run time where instrumentAgent never met them (as an MCP server's are): each is recorded like
// the agent's own, with ledgerTool's default effect unless the app wrapped it already. Whichever
// way the callback ran (live, again on a resume, or for the SDK loading a RunState), the tools
// it gives will be called.
function recordLoaded(
  result: ClientToolSearchExecutorResult<unknown>,
): ClientToolSearchExecutorResult<unknown> {
  for (const tool of toolsOf(result)) if (tool.type === "function") ledgerTool(tool);
  return result;
}

// A recorded search run again must load what it loaded then: the run goes on as the ledger
// says it went (the tools the model was given, the calls of them it holds). Compared as the
// recorder's redaction left the recorded result.
function assertLoadedAsRecorded(
  recorder: SessionRecorder,
  attempt: { attemptId: string; seq: number },
  recorded: unknown,
  loaded: JsonObject[],
): void {
  const now = (recorder.redactedPayload("tool.completed", { result: loaded }) as JsonObject).result;
  if (canonicalJson(now) === canonicalJson(recorded as JsonObject)) return;
  throw refused(
    new ReplayDivergenceError(
      `the client tool search ${TOOL_SEARCH_NAME} loaded ${JSON.stringify(recorded)} when recorded, and loads ${JSON.stringify(now)} run again: the run would go on with other tools than the ledger holds`,
      { attemptId: attempt.attemptId, seq: attempt.seq },
    ),
  );
}

/**
 * Records each search of a client tool search tool with an `execute` callback, in place: a
 * `tool.requested` (name `tool_search`, the search's arguments, its call id, `effect: { kind:
 * "read", idempotent: true }`) committed before the callback runs, then `tool.completed` with
 * the tools it loaded (`loadedTools`) or `tool.failed` with what it threw (which fails the run,
 * as the SDK does). The SDK's public `attachClientToolSearchExecutor` puts the recording
 * callback in place of the app's. The function tools it loads are wrapped with ledgerTool.
 *
 * The callback returns live tool objects, which the ledger cannot give back: a resumed run that
 * meets a recorded search runs the callback again (a search only reads), under the recorded
 * attempt, recording nothing more; the ledger keeps one call. One that now loads other tools is
 * `replay-divergence`. A search recorded as failed is
 * answered by throwing its error again; one in flight at a crash is made again as its retry.
 * What the callback writes into the run's context is recorded before its outcome, and given back
 * to a search answered from the ledger (after it runs again), as a function tool's writes are
 * (context-changes.ts): a resume from a checkpoint applies it to the app's context too.
 * Outside a ledger run the callback runs unrecorded: that is the SDK rebuilding the tools a
 * recorded search loaded while it loads a RunState (`RunState.fromString` runs the callback
 * again), which a resume from a checkpoint needs.
 */
export function recordToolSearch(tool: HostedTool): HostedTool {
  const own = getClientToolSearchExecutor(tool);
  if (!own || recordingExecutors.has(own)) return tool;
  const recording: ClientToolSearchExecutor = async (args) => {
    const scope = currentScope();
    if (!scope) return recordLoaded(await own(args));
    const recorder = await ledgerStep(() => recorderOf(scope));
    const context = callContext(args.runContext.context);
    const callId = searchCallId(args.toolCall);
    const attempt = await ledgerStep(() =>
      recorder.beforeToolCall({
        ...(callId !== undefined ? { toolCallId: callId } : {}),
        name: TOOL_SEARCH_NAME,
        args: recordedOutput(args.toolCall.arguments ?? null),
        effect: SEARCH_EFFECT,
      }),
    );
    const replayed = attempt.replayed;
    if (replayed?.status === "failed") {
      context.answered(scope.run, attempt);
      throw rebuiltError(replayed.error);
    }
    let result: ClientToolSearchExecutorResult<unknown>;
    try {
      result = recordLoaded(await own(args));
    } catch (error) {
      if (!replayed) {
        await context.recordChange(recorder, attempt);
        await ledgerStep(() => recorder.toolFailed(attempt, error));
      }
      throw error;
    }
    const loaded = loadedTools(result);
    // Answered from the ledger: run again for its live tools, its outcome recorded already. The
    // context gets what the search wrote then, over what it wrote again now, as a function
    // tool's call answered from the ledger gives it: the run goes on as recorded.
    if (replayed?.status === "completed") {
      assertLoadedAsRecorded(recorder, attempt, replayed.result, loaded);
      context.answered(scope.run, attempt);
    } else if (!replayed) {
      await context.recordChange(recorder, attempt);
      await ledgerStep(() => recorder.toolCompleted(attempt, loaded));
    }
    return result;
  };
  recordingExecutors.add(recording);
  attachClientToolSearchExecutor(tool, recording);
  return tool;
}
