import type { JsonObject, JsonValue } from "../events/json.js";
import { isObject, str } from "./extract.js";
import {
  callIdOf,
  type HostedToolCall,
  hostedItemTypeOf,
  hostedToolCallsOf,
  programCallersOf,
  providerDataOf,
} from "./hosted-tool-calls.js";
import { payloadOf, type RunRecord } from "./session-model.js";

// A hosted call the provider asked about or started in one model call can end in a later one of
// the same run: a hosted MCP call that needs approval (the `mcp_approval_request` of one
// response; the decision, an `mcp_approval_response` item the SDK sends in the next request; the
// `mcp_call` the provider then runs, in a later response), and a program that calls the agent's
// own tools (its `program_output` comes once they have answered). All of it is in the run's
// recorded model requests and responses: no ledger event stands for any of it.

/** A decision on a hosted MCP approval request, as the agent's process sent it to the provider. */
export interface HostedApprovalDecision {
  approved: boolean;
  /**
   * The reason sent with a rejection, when one was (a person's rejection message, or the
   * `reason` the agent's `onApproval` gave): the provider passes it to the model, so ATIF shows
   * it as the rejected call's result. An approval sends none.
   */
  reason?: string;
}

/**
 * The hosted calls of a run's model calls, read once from its requests and responses: the calls
 * each response holds, and what later model calls say of the calls an earlier one asked about
 * or started.
 */
export interface HostedCallAnswers {
  /**
   * The hosted calls each completed model call's response holds, approval requests among them
   * (see `hostedToolCallsOf`), by the model attempt's id. ATIF and OpenTelemetry both read a
   * response's calls here, so neither parses it again.
   */
  calls: Map<string, HostedToolCall[]>;
  /**
   * Of each completed model call whose response has a program the provider ran call the agent's
   * own tools: the program's call id, by each such tool call's id (see `programCallersOf`), by
   * the model attempt's id. ATIF and OpenTelemetry both mark a call's caller from here.
   */
  programCallers: Map<string, Map<string, string>>;
  /** Each approval request's decision, by the request's id. */
  decisions: Map<string, HostedApprovalDecision>;
  /** The `mcp_call` the provider ran once a request was approved, by the request's id. */
  ran: Map<string, { call: HostedToolCall; attemptId: string }>;
  /** The id of each approval request a response of the run made. */
  requested: Set<string>;
  /**
   * What each program's `program_output` item says (in the program's response or a later one),
   * by the program's call id.
   */
  programOutputs: Map<string, ProgramOutput>;
}

/** What a `program_output` item says of the program it answers. */
export interface ProgramOutput {
  status?: string;
  /** None when the item holds none (a program cut off): no result, rather than a `null` one. */
  output?: JsonValue;
}

function programOutputOf(item: JsonObject): ProgramOutput {
  const answer: ProgramOutput = {};
  const status = str(item.status);
  if (status) answer.status = status;
  if (item.output !== undefined && item.output !== null) answer.output = item.output;
  return answer;
}

/**
 * `call` as the run's later responses leave it: a program (see `programCallOf`) takes its
 * output's status and result. ATIF and OpenTelemetry both read a hosted call through this, so
 * they say the same of it.
 */
export function withProgramOutput(
  call: HostedToolCall,
  answers: HostedCallAnswers,
): HostedToolCall {
  const answer =
    call.itemType === "program" && call.id !== undefined
      ? answers.programOutputs.get(call.id)
      : undefined;
  return answer ? { ...call, ...answer } : call;
}

/**
 * An `mcp_approval_response` input item as a decision: the SDK's shape (its fields in
 * `providerData`), or the Responses API's. Undefined when it names no request.
 */
function decisionOf(
  item: JsonObject,
): { requestId: string; decision: HostedApprovalDecision } | undefined {
  const fields = item.type === "hosted_tool_call" ? providerDataOf(item) : item;
  const requestId = str(fields.approval_request_id);
  if (requestId === undefined) return undefined;
  const decision: HostedApprovalDecision = { approved: fields.approve === true };
  const reason = str(fields.reason);
  if (reason) decision.reason = reason;
  return { requestId, decision };
}

function isDecision(item: JsonObject): boolean {
  if (item.type === "mcp_approval_response") return true;
  return item.type === "hosted_tool_call" && hostedItemTypeOf(item) === "mcp_approval_response";
}

function itemsOf(value: JsonValue | undefined): JsonObject[] {
  return Array.isArray(value) ? value.filter(isObject) : [];
}

/** The hosted calls and answers found in `run`'s model requests and responses, in commit order. */
export function hostedCallAnswersOf(run: RunRecord): HostedCallAnswers {
  const answers: HostedCallAnswers = {
    calls: new Map(),
    programCallers: new Map(),
    decisions: new Map(),
    ran: new Map(),
    requested: new Set(),
    programOutputs: new Map(),
  };
  for (const attempt of run.attempts) {
    if (attempt.kind !== "model") continue;
    const request = payloadOf(attempt.requested).request;
    for (const item of itemsOf(isObject(request) ? request.input : undefined))
      if (isDecision(item)) {
        const decided = decisionOf(item);
        if (decided) answers.decisions.set(decided.requestId, decided.decision);
      }
    if (attempt.status !== "completed") continue;
    const response = payloadOf(attempt.outcome).response;
    const calls = hostedToolCallsOf(response);
    answers.calls.set(attempt.attemptId, calls);
    const callers = programCallersOf(response);
    if (callers.size > 0) answers.programCallers.set(attempt.attemptId, callers);
    for (const call of calls) {
      if (call.awaitsApproval && call.id) answers.requested.add(call.id);
      else if (call.approvalRequestId)
        answers.ran.set(call.approvalRequestId, { call, attemptId: attempt.attemptId });
    }
    for (const item of itemsOf(isObject(response) ? response.output : undefined))
      if (item.type === "program_output") {
        const callId = callIdOf(item);
        if (callId) answers.programOutputs.set(callId, programOutputOf(item));
      }
  }
  return answers;
}
