import type { Attributes, Span, SpanOptions } from "@opentelemetry/api";
import { type HostedCallAnswers, withProgramOutput } from "./hosted-call-answers.js";
import type { HostedToolCall } from "./hosted-tool-calls.js";
import { SPAN_KIND_INTERNAL, STATUS_ERROR } from "./otel-api-values.js";
import { derivedOtelId } from "./otel-ids.js";
import { omittedBlob } from "./otel-message-parts.js";
import type { AttemptRecord } from "./session-model.js";

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
 * with `includeToolContent` (a generated image's bytes never: the part naming them, as
 * `includeMessages` names a file's, `agent_ledger.blob_omitted` with the response's event).
 */
function hostedToolSpan(
  hosted: HostedToolCall,
  base: Attributes,
  content: { includeToolContent: boolean; responseEventId: string },
): HostedToolSpan {
  const { includeToolContent } = content;
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
      attributes["gen_ai.tool.call.result"] = JSON.stringify(
        omittedBlob(hosted.image, "image", content.responseEventId),
      );
  }
  const span: HostedToolSpan = { name: `execute_tool ${hosted.name}`, attributes };
  if (hosted.status === "failed" || hosted.error !== undefined)
    span.failure = { type: "failed", message: hosted.error ?? "" };
  return span;
}

/** The attributes of a model call's `chat` span that its hosted calls' spans repeat. */
const FROM_CHAT_SPAN = [
  "gen_ai.conversation.id",
  "agent_ledger.run.id",
  "agent_ledger.step.id",
  "agent_ledger.attempt.copied",
];

/**
 * Starts the `execute_tool` spans of the tool calls the provider ran inside a completed model
 * call (hosted tools: see `hostedToolSpan`), under its `chat` span. The response does not say
 * when each ran, only that it was inside the call: each spans the call. A program's status and
 * result are its output's, which may come in a later response (see `withProgramOutput`).
 */
export function emitHostedSpans(call: {
  sessionId: string;
  /** A completed model call: its outcome, the `model.completed` event, ends each span. */
  attempt: AttemptRecord;
  /** The hosted calls of the attempt's run (its own by attempt id) and their answers. */
  answers: HostedCallAnswers;
  chat: Span;
  chatAttributes: Attributes;
  includeToolContent: boolean;
  startSpan: (
    name: string,
    spanOptions: SpanOptions,
    parent: Span,
    ids: { spanId: string },
  ) => Span;
  pushEnd: (span: Span, at: Date) => void;
}): void {
  const { attempt, chatAttributes } = call;
  const completed = attempt.outcome;
  if (completed === undefined) return;
  const base: Attributes = {};
  for (const key of FROM_CHAT_SPAN)
    if (chatAttributes[key] !== undefined) base[key] = chatAttributes[key];
  // A hosted MCP call that waits on an approval ran nothing (yet): if approved, the call that
  // runs is in a later response, and has its span there.
  const calls = (call.answers.calls.get(attempt.attemptId) ?? []).filter(
    (found) => !found.awaitsApproval,
  );
  calls.forEach((found, index) => {
    const hosted = withProgramOutput(found, call.answers);
    const made = hostedToolSpan(hosted, base, {
      includeToolContent: call.includeToolContent,
      responseEventId: completed.eventId,
    });
    const span = call.startSpan(
      made.name,
      {
        kind: SPAN_KIND_INTERNAL,
        startTime: new Date(attempt.requested.recordedAt),
        attributes: made.attributes,
      },
      call.chat,
      {
        spanId: derivedOtelId(16, [
          "hosted",
          call.sessionId,
          attempt.runId,
          attempt.attemptId,
          String(index),
        ]),
      },
    );
    if (made.failure) {
      span.setAttribute("error.type", made.failure.type);
      span.setStatus({ code: STATUS_ERROR, message: made.failure.message });
    }
    call.pushEnd(span, new Date(completed.recordedAt));
  });
}
