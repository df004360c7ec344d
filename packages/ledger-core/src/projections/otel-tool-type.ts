import { type AttemptRecord, retryChainOf, type SessionModel } from "./session-model.js";

// The `gen_ai.tool.type` of an `execute_tool` span, as the adapters note it.

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
