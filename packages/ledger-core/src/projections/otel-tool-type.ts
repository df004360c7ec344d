import type { HostedCallAnswers } from "./hosted-call-answers.js";
import {
  type AttemptRecord,
  causeOf,
  payloadOf,
  type RunRecord,
  retryChainOf,
  type SessionModel,
} from "./session-model.js";

// The `gen_ai.tool.type` of an `execute_tool` span, as the adapters note it, and who made the
// call when the model did not (a program the provider ran).

const TOOL_TYPES: ReadonlySet<string> = new Set(["function", "extension", "datastore"]);

/**
 * `gen_ai.tool.type`: the one the call's adapter noted in its request's metadata (`toolType`:
 * `datastore` for a LangChain retriever, `extension` for an MCP tool or an AI SDK
 * provider-defined one), or in the request of an attempt it retries (the same call, made
 * again after a person approved it), else `function`, a tool the app defined and ran.
 */
export function toolTypeOf(model: SessionModel, attempt: AttemptRecord): string {
  for (const link of retryChainOf(model, attempt).reverse()) {
    const toolType = link.requested.metadata?.toolType;
    if (typeof toolType === "string" && TOOL_TYPES.has(toolType)) return toolType;
  }
  return "function";
}

/** What `programCallerOf` reads: a tool attempt, and the hosted call answers of any run. */
export interface ProgramCallerOptions {
  model: SessionModel;
  attempt: AttemptRecord;
  /** The hosted calls of a run and their answers, read once per run (`hostedCallAnswersOf`). */
  answersOf: (run: RunRecord) => HostedCallAnswers;
}

/**
 * The call id of the program the provider ran that made the tool call of `attempt`
 * (programmatic tool calling: the call's item in the response of the model call that caused it
 * names the program as its `caller`), or undefined for a call the model made itself.
 */
export function programCallerOf(options: ProgramCallerOptions): string | undefined {
  const { model, attempt } = options;
  const toolCallId = payloadOf(attempt.requested).toolCallId;
  const cause = causeOf(model, attempt);
  const completed = cause === undefined ? undefined : model.byEventId.get(cause);
  if (typeof toolCallId !== "string" || completed?.type !== "model.completed") return undefined;
  const run = model.runs.get(completed.runId);
  if (run === undefined || completed.attemptId === undefined) return undefined;
  return options.answersOf(run).programCallers.get(completed.attemptId)?.get(toolCallId);
}
