import type { Attributes } from "@opentelemetry/api";
import type { HostedToolCall } from "./hosted-tool-calls.js";

// `@opentelemetry/api` is an optional peer: only its types are imported here.

/** The `execute_tool` span of a tool call the provider ran inside a model call: its name and attributes. */
export interface HostedToolSpan {
  name: string;
  attributes: Attributes;
  /** A call the provider says failed: the span's `error.type` and status message. */
  failure?: { type: string; message: string };
}

/**
 * The `execute_tool {name}` span of a hosted tool call (see `hostedToolCallsOf`), which hangs
 * under the `chat` span of the model call it ran in: `gen_ai.tool.type` `extension` (or
 * `datastore`, a file search), `agent_ledger.tool.executed_by = "provider"` (no attempt of the
 * ledger stands for it), the call's id and the provider's status; its arguments and result
 * with `includeToolContent` (a generated image's bytes never: only its media type).
 */
export function hostedToolSpan(
  hosted: HostedToolCall,
  base: Attributes,
  includeToolContent: boolean,
): HostedToolSpan {
  const attributes: Attributes = {
    ...base,
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": hosted.name,
    "gen_ai.tool.type": hosted.toolType,
    "agent_ledger.tool.executed_by": "provider",
    "agent_ledger.tool.item_type": hosted.itemType,
  };
  if (hosted.id !== undefined) attributes["gen_ai.tool.call.id"] = hosted.id;
  if (hosted.status !== undefined) attributes["agent_ledger.tool.status"] = hosted.status;
  if (hosted.serverLabel !== undefined)
    attributes["agent_ledger.tool.server_label"] = hosted.serverLabel;
  // A hosted MCP call that was approved: the request (of an earlier model call) it answers. The
  // span is named by what ran; ATIF names the call by this request's id (`extra.ran_as` is the
  // id here): either joins the two.
  if (hosted.approvalRequestId !== undefined)
    attributes["agent_ledger.tool.approval_request_id"] = hosted.approvalRequestId;
  if (includeToolContent) {
    attributes["gen_ai.tool.call.arguments"] = JSON.stringify(hosted.arguments);
    if (hosted.output !== undefined)
      attributes["gen_ai.tool.call.result"] = JSON.stringify(hosted.output);
    else if (hosted.image !== undefined)
      attributes["gen_ai.tool.call.result"] = JSON.stringify({
        image_omitted: hosted.image.mediaType ?? "image",
      });
  }
  const span: HostedToolSpan = { name: `execute_tool ${hosted.name}`, attributes };
  if (hosted.status === "failed" || hosted.error !== undefined)
    span.failure = { type: "failed", message: hosted.error ?? "" };
  return span;
}
