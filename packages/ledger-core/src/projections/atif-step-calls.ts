import { argumentsObject } from "./atif-content.js";
import type { DraftStep } from "./atif-draft-steps.js";
import { hostedAtifCalls, markProgramCallers } from "./atif-hosted-calls.js";
import { observationOf, toolCallOf } from "./atif-tool-calls.js";
import type { AtifObservationResult, AtifToolCall } from "./atif-types.js";
import type { ExtractedToolCall } from "./extract.js";
import type { HostedCallAnswers } from "./hosted-call-answers.js";
import {
  type AttemptRecord,
  type RunRecord,
  retryChainOf,
  type SessionModel,
} from "./session-model.js";

// The tool calls of a model call's step, and what each gave: the calls of the agent's tools
// that the completion asked for, the ones it asked for that were never requested or that a
// child run stands for, and the ones the provider ran inside the call.

/** What `addStepToolCalls` reads: a model call's step, and what its completion asked for. */
export interface StepToolCallsOptions {
  model: SessionModel;
  run: RunRecord;
  /** The step: each call's requests join its causes, and its result is kept by them. */
  draft: DraftStep;
  /** The model attempt the step shows. */
  shown: AttemptRecord;
  /** The tool calls the shown attempt's response asked for (see `completionOf`). */
  completion: { toolCalls: ExtractedToolCall[] };
  /** The tool attempts the completions of the step's chain asked for (see `toolCallsByCause`). */
  tools: AttemptRecord[];
  /** attemptIds of the tool attempts that get no step of their own: `tools` are added. */
  claimed: Set<string>;
  /** The ids of the calls the paused run waits on a person to decide. */
  awaited: ReadonlySet<string | undefined>;
  /** The answers later model calls of the run give (see `hostedCallAnswersOf`). */
  hostedAnswers: HostedCallAnswers;
}

/** Sets the step's `tool_calls` and `observation` from its calls (see the file's comment). */
export function addStepToolCalls(options: StepToolCallsOptions): void {
  const { model, run, draft, shown, completion, tools, claimed, awaited, hostedAnswers } = options;
  const step = draft.step;
  const completed = shown.status === "completed";
  const calls: AtifToolCall[] = [];
  const results: AtifObservationResult[] = [];
  for (const tool of tools) {
    claimed.add(tool.attemptId);
    const chain = retryChainOf(model, tool);
    const call = toolCallOf(tool);
    if (chain.length > 1)
      call.extra = { ...call.extra, attempt_ids: chain.map((link) => link.attemptId) };
    calls.push(call);
    const result = observationOf(tool, run);
    results.push(result);
    for (const link of chain) {
      draft.resultsByCause.set(link.requested.eventId, result);
      draft.causes.push(link.requested.eventId);
    }
  }
  // Calls the model asked for that were never requested (the loop stopped first).
  const unrequested: AtifToolCall[] = [];
  for (const call of completion.toolCalls) {
    if (calls.some((existing) => existing.tool_call_id === call.id)) continue;
    if (tools.length > 0 && call.id === undefined) continue;
    const unasked: AtifToolCall = {
      tool_call_id: call.id ?? `${shown.attemptId}:${calls.length}`,
      function_name: call.name,
      arguments: argumentsObject(call.arguments),
      // Asked, and waiting on a person's approval (a paused run), or never asked.
      extra: {
        status:
          call.id !== undefined && awaited.has(call.id) ? "awaiting-decision" : "not-requested",
      },
    };
    calls.push(unasked);
    unrequested.push(unasked);
  }
  // Unless the completion started a child run and asked for one call no tool ran: that call
  // is the child run (an OpenAI Agents handoff, recorded as the next agent's run), and the
  // child's trajectory is its result.
  const started = shown.outcome
    ? run.children.filter((child) => child.causedByEventId === shown.outcome?.eventId)
    : [];
  const [handedTo] = started;
  const [only] = unrequested;
  if (started.length === 1 && unrequested.length === 1 && handedTo && only && shown.outcome) {
    only.extra = { status: "child-run", child_run_id: handedTo.runId };
    const result: AtifObservationResult = { source_call_id: only.tool_call_id, content: null };
    results.push(result);
    draft.resultsByCause.set(shown.outcome.eventId, result);
  }
  // Calls the provider ran inside the model call (hosted tools), before the agent's own:
  // they ran first. No attempt of the ledger stands for them (see hostedAtifCalls).
  if (completed && shown.outcome) {
    markProgramCallers(calls, hostedAnswers.programCallers.get(shown.attemptId));
    const hosted = hostedAtifCalls({
      attemptId: shown.attemptId,
      completedEventId: shown.outcome.eventId,
      answers: hostedAnswers,
      awaited,
    });
    calls.unshift(...hosted.calls);
    results.unshift(...hosted.results);
  }
  if (calls.length > 0) step.tool_calls = calls;
  if (results.length > 0) step.observation = { results };
}
