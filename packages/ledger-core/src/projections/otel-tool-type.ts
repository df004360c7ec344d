import { programCallersOf } from "./hosted-tool-calls.js";
import {
  type AttemptRecord,
  causeOf,
  payloadOf,
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

/**
 * The call id of the program the provider ran that made the tool call of `attempt`
 * (programmatic tool calling: the call's item in the response of the model call that caused it
 * names the program as its `caller`), or undefined for a call the model made itself.
 */
export function programCallerOf(model: SessionModel, attempt: AttemptRecord): string | undefined {
  const toolCallId = payloadOf(attempt.requested).toolCallId;
  const cause = causeOf(model, attempt);
  const completed = cause === undefined ? undefined : model.byEventId.get(cause);
  if (typeof toolCallId !== "string" || completed?.type !== "model.completed") return undefined;
  return programCallersOf(payloadOf(completed).response).get(toolCallId);
}
