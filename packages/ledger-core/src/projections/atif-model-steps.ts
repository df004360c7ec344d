import type { LedgerEvent } from "../events/types.js";
import type { DraftStep } from "./atif-draft-steps.js";
import {
  addTokens,
  attemptMetrics,
  retriedAttemptsOf,
  shownAttemptOf,
  type TokenTotals,
  unfinishedExtra,
} from "./atif-retries.js";
import { addStepToolCalls } from "./atif-step-calls.js";
import type { AtifMetrics, AtifStep } from "./atif-types.js";
import type { HostedCallAnswers } from "./hosted-call-answers.js";
import { completionOf } from "./model-completions.js";
import { modelNameOf } from "./model-names.js";
import {
  type AttemptRecord,
  isUnresolved,
  payloadOf,
  type RunRecord,
  retryChainOf,
  type SessionModel,
} from "./session-model.js";

// How an ATIF trajectory shows a model call of its run: an agent step with the assistant's
// reply, its model, tokens and tool calls.

/** What `modelStep` reads: a model call of a run (the last attempt of its retry chain). */
export interface ModelStepOptions {
  model: SessionModel;
  run: RunRecord;
  /** The attempt's `model.requested` event: the step's place. */
  event: LedgerEvent;
  attempt: AttemptRecord;
  /** The run's tool calls by the completion that asked for them (see `toolCallsByCause`). */
  toolsByCause: Map<string, AttemptRecord[]>;
  /** attemptIds of the tool attempts that get no step of their own: the step's are added. */
  claimed: Set<string>;
  /** The trajectory's token totals: the chain's attempts the step does not show add theirs. */
  totals: TokenTotals;
  /** The ids of the calls the paused run waits on a person to decide. */
  awaited: ReadonlySet<string | undefined>;
  /** The answers later model calls of the run give (see `hostedCallAnswersOf`). */
  hostedAnswers: HostedCallAnswers;
}

/**
 * The step of a model call. A retried model call is one step, at the place of its last
 * attempt: the attempt that completed (else the last) shows it, the others are said in its
 * `extra`.
 */
export function modelStep(options: ModelStepOptions): DraftStep {
  const { model, run, event, attempt, toolsByCause, claimed, totals, awaited, hostedAnswers } =
    options;
  const chain = retryChainOf(model, attempt);
  const shown = shownAttemptOf(chain);
  const outcome = payloadOf(shown.outcome);
  const completed = shown.status === "completed";
  // A failed, cut-off or lost attempt said nothing as the assistant: what it had is in extra.
  const completion = completionOf(completed ? outcome.response : undefined);
  const step: Omit<AtifStep, "step_id"> = {
    timestamp: shown.outcome?.recordedAt ?? shown.requested.recordedAt,
    source: "agent",
    message: completion.text,
    llm_call_count: 1,
    ...(shown.copiedFrom !== undefined ? { is_copied_context: true } : {}),
    extra: {
      run_id: run.runId,
      step_id: shown.stepId,
      attempt_id: shown.attemptId,
      status: isUnresolved(shown) ? "unresolved" : shown.status,
      ...unfinishedExtra(shown),
      ...(shown.requested.retryOf !== undefined ? { retry_of: shown.requested.retryOf } : {}),
      ...(chain.length > 1
        ? {
            attempt_ids: chain.map((link) => link.attemptId),
            retried_attempts: retriedAttemptsOf(chain, shown),
          }
        : {}),
    },
  };
  if (completion.reasoning) step.reasoning_content = completion.reasoning;
  const name = modelNameOf(
    payloadOf(shown.requested).request,
    (completed ? outcome.response : outcome.partial) ?? null,
    shown.requested.metadata,
  );
  if (name) step.model_name = name;
  const metrics: AtifMetrics = attemptMetrics(shown);
  if (Object.keys(metrics).length > 0) step.metrics = metrics;
  const draft: DraftStep = {
    at: event.commitCursor,
    step,
    causes: [],
    resultsByCause: new Map(),
  };
  const tools: AttemptRecord[] = [];
  for (const link of chain) {
    draft.causes.push(link.requested.eventId);
    if (!link.outcome) continue;
    draft.causes.push(link.outcome.eventId);
    tools.push(...(toolsByCause.get(link.outcome.eventId) ?? []));
    if (link === shown || link.copiedFrom !== undefined) continue;
    // The tokens an attempt not shown used were spent all the same: the totals count them,
    // as they did when each attempt was a step of its own.
    addTokens(totals, attemptMetrics(link));
  }
  addStepToolCalls({
    model,
    run,
    draft,
    shown,
    completion,
    tools,
    claimed,
    awaited,
    hostedAnswers,
  });
  return draft;
}
