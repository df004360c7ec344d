import type { JsonObject } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import { argumentsObject, asContent, resultContent } from "./atif-content.js";
import type { DraftStep } from "./atif-draft-steps.js";
import { mediaObserved, readByModel } from "./atif-observed.js";
import { errorText } from "./atif-run-ends.js";
import type { AtifObservationResult, AtifToolCall } from "./atif-types.js";
import { isObject, toolResultOf } from "./extract.js";
import {
  type AttemptRecord,
  isUnresolved,
  payloadOf,
  type RunRecord,
  retryChainOf,
  type SessionModel,
} from "./session-model.js";

// How an ATIF trajectory shows the calls of the agent's own tools: each a call of the step
// whose model completion asked for it (see `addStepToolCalls`), with the result the agent
// observed; a call no completion of its run asked for, a step of its own.

/** A tool attempt as an ATIF tool call: its toolCallId, else its attemptId, names it. */
export function toolCallOf(attempt: AttemptRecord): AtifToolCall {
  const payload = payloadOf(attempt.requested);
  return {
    tool_call_id: typeof payload.toolCallId === "string" ? payload.toolCallId : attempt.attemptId,
    function_name: typeof payload.name === "string" ? payload.name : "tool",
    arguments: argumentsObject(payload.args),
    extra: {
      attempt_id: attempt.attemptId,
      status: isUnresolved(attempt) ? "unresolved" : attempt.status,
      ...(payload.effect !== undefined ? { effect: payload.effect } : {}),
    },
  };
}

/**
 * What the model read of a failed call, when its adapter recorded it in the failure's metadata
 * (`modelWasTold`: OpenAI Agents gives the model its own message, not the error).
 */
function toldOfFailure(attempt: AttemptRecord): string | null | undefined {
  const metadata = attempt.outcome?.metadata;
  const told = isObject(metadata) ? metadata.modelWasTold : undefined;
  return told === undefined || told === null ? undefined : asContent(told);
}

/**
 * A tool call's result as the agent observed it. One holding images or other files, or naming
 * files by a provider's file id (what the model read of it, else the recorded result: see
 * `mediaObserved`) is ATIF content parts, the images it cannot show named in
 * `extra.images_omitted`, the files in `extra.files_omitted`; any other is the recorded result
 * as text (`resultContent`: an OpenAI Agents text output is its text). A call without a result of its
 * own (failed, abandoned) is what the model read of it in the run's next request, as its
 * adapter worded it ("Tool call rejected: ...", "An error occurred while running the
 * tool..."), else what the adapter recorded it told the model, else the error or the abandon's
 * reason; the error and the reason are kept in `extra`.
 */
export function observationOf(attempt: AttemptRecord, run: RunRecord): AtifObservationResult {
  const call = toolCallOf(attempt);
  const outcome = payloadOf(attempt.outcome);
  if (attempt.status === "completed") {
    const media = mediaObserved(run, attempt);
    if (media === undefined)
      return {
        source_call_id: call.tool_call_id,
        content: resultContent(toolResultOf(outcome.result), attempt.requested.actor?.framework),
      };
    return {
      source_call_id: call.tool_call_id,
      content: media.content,
      ...(Object.keys(media.extra).length > 0 ? { extra: media.extra } : {}),
    };
  }
  let content: string | null;
  const extra: JsonObject = { status: isUnresolved(attempt) ? "unresolved" : attempt.status };
  if (attempt.status === "failed") {
    const told = readByModel(run, attempt) ?? toldOfFailure(attempt);
    content = told ?? errorText(outcome);
    if (told !== undefined) extra.error = errorText(outcome);
  } else if (attempt.status === "abandoned") {
    const reason = String(outcome.reason ?? "");
    const told = readByModel(run, attempt);
    content = told ?? `abandoned: ${reason}`;
    if (told !== undefined) extra.reason = reason;
  } else content = null;
  return { source_call_id: call.tool_call_id, content, extra };
}

/** The tool calls of a run, by the model completion that asked for them. */
export interface ToolCallsByCause {
  /**
   * A `model.completed` eventId of the run -> the tool attempts it asked for (the last of each
   * retry chain), in the order they were asked.
   */
  toolsByCause: Map<string, AttemptRecord[]>;
  /**
   * attemptIds of the tool attempts that get no step of their own: a retried one (the last of
   * its chain stands for it), and, as the steps are made, each one a model call's step shows.
   */
  claimed: Set<string>;
}

/** The tool calls of `run` by the model completion of the run that asked for them. */
export function toolCallsByCause(model: SessionModel, run: RunRecord): ToolCallsByCause {
  const claimed = new Set<string>();
  const toolsByCause = new Map<string, AttemptRecord[]>();
  // A retried tool call is one call: the last attempt of its chain stands for it, with the
  // cause of the first (a `retry()` does not repeat causedByEventId).
  const chainOf = (attempt: AttemptRecord) => retryChainOf(model, attempt);
  for (const attempt of run.attempts) {
    if (attempt.kind !== "tool") continue;
    if (attempt.retriedBy !== undefined) {
      claimed.add(attempt.attemptId);
      continue;
    }
    const chain = chainOf(attempt);
    const cause = chain.find((link) => link.requested.causedByEventId !== undefined)?.requested
      .causedByEventId;
    const causeEvent = cause === undefined ? undefined : model.byEventId.get(cause);
    if (cause && causeEvent?.type === "model.completed" && causeEvent.runId === run.runId) {
      const list = toolsByCause.get(cause) ?? [];
      list.push(attempt);
      toolsByCause.set(cause, list);
    }
  }
  // In the order they were asked: a retried call's chain starts where it was first requested.
  const firstAt = (attempt: AttemptRecord) => chainOf(attempt)[0]?.requested.commitCursor ?? 0;
  for (const list of toolsByCause.values()) list.sort((a, b) => firstAt(a) - firstAt(b));
  return { toolsByCause, claimed };
}

/** What `toolStep` reads: a tool call no model completion of its run asked for. */
export interface ToolStepOptions {
  run: RunRecord;
  attempt: AttemptRecord;
  /** The attempt's `tool.requested` event: the step's place. */
  event: LedgerEvent;
}

/** The step of a tool call no model completion of this run asked for (direct or cross-run). */
export function toolStep(options: ToolStepOptions): DraftStep {
  const { run, attempt, event } = options;
  const result = observationOf(attempt, run);
  return {
    at: event.commitCursor,
    step: {
      timestamp: event.recordedAt,
      source: "agent",
      message: "",
      llm_call_count: 0,
      ...(attempt.copiedFrom !== undefined ? { is_copied_context: true } : {}),
      tool_calls: [toolCallOf(attempt)],
      observation: { results: [result] },
      extra: { run_id: run.runId, step_id: attempt.stepId },
    },
    causes: [event.eventId],
    resultsByCause: new Map([[event.eventId, result]]),
  };
}
