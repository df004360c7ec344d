import type { JsonObject } from "../events/json.js";
import { argumentsObject, asContent, atifMessageOf } from "./atif-content.js";
import type { AtifObservationResult, AtifToolCall } from "./atif-types.js";
import { type HostedCallAnswers, withProgramOutput } from "./hosted-call-answers.js";
import type { HostedToolCall } from "./hosted-tool-calls.js";

/** What `hostedAtifCalls` reads: one completed model call of a run, and what the run says of it. */
export interface HostedAtifCallsOptions {
  attemptId: string;
  completedEventId: string;
  /**
   * The run's hosted calls (this call's by `attemptId`) and what later model calls say of them
   * (see `hostedCallAnswersOf`).
   */
  answers: HostedCallAnswers;
  /** The ids of the calls the paused run waits on a person to decide. */
  awaited: ReadonlySet<string | undefined>;
}

/**
 * A hosted MCP call that waited on an approval, as its decision left it: run (the `mcp_call` of
 * a later response, whose status, result and id it takes), approved and not run yet, rejected,
 * awaiting the decision of the paused run, or undecided (no decision was ever sent).
 */
function decidedCall(
  hosted: HostedToolCall,
  answers: HostedCallAnswers,
  awaited: ReadonlySet<string | undefined>,
): { call: HostedToolCall; extra: JsonObject } {
  const decision = hosted.id === undefined ? undefined : answers.decisions.get(hosted.id);
  const ran = hosted.id === undefined ? undefined : answers.ran.get(hosted.id);
  // The call the provider ran says it was approved, whatever decision was seen (if any).
  const approval = ran || decision?.approved ? "approved" : decision ? "rejected" : undefined;
  const extra: JsonObject = approval ? { approval } : {};
  if (ran) {
    extra.ran_as = ran.call.id ?? null;
    extra.ran_in_attempt = ran.attemptId;
    // It keeps the request's id (the call the step asked for) and waits on nothing any more.
    const { awaitsApproval: _awaits, ...asked } = hosted;
    const { id: _id, approvalRequestId: _request, ...result } = ran.call;
    return { call: { ...asked, ...result }, extra };
  }
  const status =
    approval ??
    (hosted.id !== undefined && awaited.has(hosted.id) ? "awaiting-decision" : "undecided");
  const call: HostedToolCall = { ...hosted, status };
  // What the model was told of a rejection: the call's only result.
  if (decision?.approved === false && decision.reason !== undefined) call.output = decision.reason;
  return { call, extra };
}

/**
 * The tool calls the provider ran inside a completed model call (see `hostedToolCallsOf`) as
 * ATIF tool calls of that call's step, marked `extra.executed_by: "provider"` (no attempt of
 * the ledger: the agent's process made no such call), with what each gave the model as its
 * observation result when the response holds it (a failed call: its error; a generated image:
 * named, its bytes left in `completedEventId`'s payload, as `atifMessageOf` does). A call
 * without an id of its own is named after the model attempt (`{attemptId}:hosted:{n}`).
 *
 * A hosted MCP call that needs approval is one call of the step that asked (as a call of the
 * agent's own tool that waits on a person): its `extra.status` says where the decision is
 * (`awaiting-decision` while the run is paused on it), and once approved and run, in a later
 * model call, it takes that call's status and result; that later step does not show it again.
 * A program takes its output's status and result, from the same response or a later one (see
 * `withProgramOutput`).
 */
export function hostedAtifCalls(options: HostedAtifCallsOptions): {
  calls: AtifToolCall[];
  results: AtifObservationResult[];
} {
  const { attemptId, completedEventId, answers, awaited } = options;
  const calls: AtifToolCall[] = [];
  const results: AtifObservationResult[] = [];
  const found = answers.calls.get(attemptId) ?? [];
  found.forEach((each, index) => {
    // Shown with the request it answers, in the step that asked.
    if (each.approvalRequestId !== undefined && answers.requested.has(each.approvalRequestId))
      return;
    let hosted = each;
    let decided: JsonObject = {};
    if (each.awaitsApproval)
      ({ call: hosted, extra: decided } = decidedCall(each, answers, awaited));
    hosted = withProgramOutput(hosted, answers);
    const toolCallId = hosted.id ?? `${attemptId}:hosted:${index}`;
    const extra: JsonObject = { executed_by: "provider", item_type: hosted.itemType };
    if (hosted.status !== undefined) extra.status = hosted.status;
    if (hosted.serverLabel !== undefined) extra.server_label = hosted.serverLabel;
    Object.assign(extra, decided);
    calls.push({
      tool_call_id: toolCallId,
      function_name: hosted.name,
      arguments: argumentsObject(hosted.arguments),
      extra,
    });
    const resultExtra: JsonObject = { executed_by: "provider" };
    if (hosted.error !== undefined) resultExtra.error = hosted.error;
    if (hosted.image !== undefined) {
      const { base64, mediaType } = hosted.image;
      const part = { type: "image", image: base64, ...(mediaType ? { mediaType } : {}) };
      const { message, extra: imageExtra } = atifMessageOf([part], completedEventId);
      results.push({
        source_call_id: toolCallId,
        content: message,
        extra: { ...resultExtra, ...imageExtra },
      });
    } else if (hosted.output !== undefined || hosted.error !== undefined)
      results.push({
        source_call_id: toolCallId,
        content: asContent(hosted.output) ?? hosted.error ?? null,
        extra: resultExtra,
      });
  });
  return { calls, results };
}

/**
 * Marks each of `calls` (a step's calls of the agent's tools) that a program the provider ran
 * made, rather than the model, with `extra.caller_id`: the program's call id, from `callers`
 * (those of the step's response, see `HostedCallAnswers.programCallers`).
 */
export function markProgramCallers(
  calls: AtifToolCall[],
  callers: ReadonlyMap<string, string> | undefined,
): void {
  if (callers === undefined) return;
  for (const call of calls) {
    const callerId = callers.get(call.tool_call_id);
    if (callerId !== undefined) call.extra = { ...call.extra, caller_id: callerId };
  }
}
