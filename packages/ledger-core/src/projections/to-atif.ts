import type { JsonObject, JsonValue } from "../events/json.js";
import type { AwaitingDecisionView } from "../inspect/awaiting-decision.js";
import { type RunInTree, runsInTreeOrder } from "../inspect/run-tree-order.js";
import type { EventStore } from "../store/event-store.js";
import type { DraftStep } from "./atif-draft-steps.js";
import { modelStep } from "./atif-model-steps.js";
import { addTokens, type TokenTotals } from "./atif-retries.js";
import { startSteps, withoutStacks } from "./atif-run-ends.js";
import { referenceSubagents } from "./atif-subagents.js";
import { systemStep } from "./atif-system-steps.js";
import { toolCallsByCause, toolStep } from "./atif-tool-calls.js";
import type { AtifStep, AtifTrajectory } from "./atif-types.js";
import { UserConversations, userInputContents, userStep } from "./atif-user-steps.js";
import { isEmbeddingsRequest, isObject } from "./extract.js";
import { hostedCallAnswersOf } from "./hosted-call-answers.js";
import { modelNameOf } from "./model-names.js";
import { pausesOf, runStatus } from "./paused-runs.js";
import {
  agentVersionOf,
  attemptKey,
  isUnresolved,
  loadSessionModel,
  payloadOf,
  type RunRecord,
  type SessionModel,
} from "./session-model.js";

/** A paused run's pause, as its trajectory's `extra.awaiting_decision` says it. */
function awaitingDecisionOf(pause: AwaitingDecisionView): JsonObject {
  return {
    since: pause.since,
    calls: pause.calls.map((call) => ({
      name: call.name,
      ...(call.toolCallId !== undefined ? { tool_call_id: call.toolCallId } : {}),
      ...(call.args !== undefined ? { arguments: call.args } : {}),
      ...(call.agent !== undefined ? { agent: call.agent } : {}),
      // A call a crash left in flight may have had its effect: its attempt, as the step's call
      // shows it (`attempt_id`), so a reader does not take it for a call never made.
      ...(call.inFlightAttemptId !== undefined
        ? { in_flight_attempt_id: call.inFlightAttemptId }
        : {}),
    })),
    ...(pause.decideWith !== undefined ? { decide_with: pause.decideWith } : {}),
  };
}

/**
 * The trajectory of `run`, embedding `subagents`, the trajectories of its children (in order),
 * made first: a call per child nested inside its parent's overflowed the stack at a chain of
 * about 1,000 handoffs.
 */
function runTrajectory(
  model: SessionModel,
  run: RunRecord,
  subagents: AtifTrajectory[],
  pause: AwaitingDecisionView | undefined,
): AtifTrajectory {
  const awaited = new Set(pause?.calls.map((call) => call.toolCallId));
  const hostedAnswers = hostedCallAnswersOf(run);
  const drafts: DraftStep[] = [];
  const { toolsByCause, claimed } = toolCallsByCause(model, run);
  // Each system prompt the run's model calls were given, shown once (see systemStep).
  const systemsShown = new Set<string>();
  // Adapters that record no input.received (AI SDK, LangChain) leave the user's messages in
  // the model requests only: the ones a request adds become user steps.
  const firstInput = run.events.find((event) => event.type === "input.received");
  const inputsRecorded = firstInput !== undefined;
  const conversations = new UserConversations();
  // Tokens of the model attempts a retried call's step does not show (a cut-off stream's).
  const totals: TokenTotals = { prompt: 0, completion: 0, cached: 0 };
  let firstModel: string | undefined;
  let toolDefinitions: JsonValue[] | undefined;

  for (const event of run.events) {
    if (event.type === "input.received") {
      userInputContents(payloadOf(event).input ?? null).forEach((content, index) => {
        drafts.push({
          at: event.commitCursor,
          step: userStep(event, content),
          causes: index === 0 ? [event.eventId] : [],
          resultsByCause: new Map(),
        });
      });
      continue;
    }
    if (event.type !== "model.requested" && event.type !== "tool.requested") continue;
    const attempt = event.attemptId
      ? model.attempts.get(attemptKey(event.runId, event.attemptId))
      : undefined;
    if (!attempt) continue;

    if (attempt.kind === "model") {
      const request = payloadOf(event).request;
      // An embedding call is no step of the trajectory (no message, another model).
      if (isEmbeddingsRequest(request)) continue;
      // Else the name its adapter noted in the metadata (OpenAI Agents: its requests carry none).
      const modelName = modelNameOf(request, event.metadata);
      firstModel ??= modelName;
      if (!toolDefinitions && isObject(request) && Array.isArray(request.tools))
        toolDefinitions = request.tools;
      const system = systemStep({ request, event, firstInput, systemsShown });
      if (system) drafts.push(system);
      if (!inputsRecorded && event.retryOf === undefined) {
        for (const message of conversations.added(request))
          drafts.push({
            at: event.commitCursor - 0.25,
            step: userStep(event, message.content),
            causes: [],
            resultsByCause: new Map(),
          });
      }
      // A retried model call is one step, at the place of its last attempt (see modelStep).
      if (attempt.retriedBy !== undefined) continue;
      drafts.push(
        modelStep({
          model,
          run,
          event,
          attempt,
          toolsByCause,
          claimed,
          totals,
          awaited,
          hostedAnswers,
        }),
      );
    } else if (!claimed.has(attempt.attemptId)) {
      // A tool call no model completion of this run asked for (direct or cross-run).
      drafts.push(toolStep({ run, attempt, event }));
    }
  }

  // Child runs: embedded, referenced from the step that caused them.
  referenceSubagents({ model, run, drafts });

  // ATIF requires at least one step: a run that ended (or crashed) before any input, call or
  // sub-agent still gets one, from what its start recorded.
  if (drafts.length === 0)
    for (const step of startSteps(run))
      drafts.push({ at: -1, step, causes: [], resultsByCause: new Map() });
  drafts.sort((a, b) => a.at - b.at);
  const steps: AtifStep[] = drafts.map((draft, index) => ({ step_id: index + 1, ...draft.step }));
  // A fork's copies were paid for in the run they were copied from.
  for (const step of steps) if (!step.is_copied_context) addTokens(totals, step.metrics);
  const started = run.started ?? run.events[0];
  const version = agentVersionOf(run.started) ?? "unknown";
  const actor = started?.actor;
  const trajectory: AtifTrajectory = {
    schema_version: "ATIF-v1.7",
    session_id: model.sessionId,
    trajectory_id: run.runId,
    agent: {
      name: actor?.id ?? "agent",
      version,
      ...(firstModel ? { model_name: firstModel } : {}),
      ...(toolDefinitions ? { tool_definitions: toolDefinitions } : {}),
      extra: {
        actor_type: actor?.type ?? null,
        ...(actor?.framework ? { framework: actor.framework } : {}),
      },
    },
    steps,
    final_metrics: {
      total_prompt_tokens: totals.prompt,
      total_completion_tokens: totals.completion,
      total_cached_tokens: totals.cached,
      total_steps: steps.length,
    },
    extra: {
      run_id: run.runId,
      status: runStatus(run, pause !== undefined),
      ...(pause ? { awaiting_decision: awaitingDecisionOf(pause) } : {}),
      ...(run.parentRunId !== undefined ? { parent_run_id: run.parentRunId } : {}),
      ...(run.terminal ? { result: withoutStacks(run.terminal.payload) } : {}),
      unresolved_attempts: run.attempts.filter(isUnresolved).map((attempt) => attempt.attemptId),
    },
  };
  if (subagents.length > 0) trajectory.subagent_trajectories = subagents;
  return trajectory;
}

/**
 * The session as an ATIF v1.7 trajectory (§7): the first root run is the main trajectory,
 * child runs are embedded in `subagent_trajectories` and referenced (by `trajectory_id`, the
 * runId) from the observation of the step that caused them. Other root runs are embedded too.
 * Derived, never stored: unknown payload shapes only reduce the detail.
 */
export async function toAtif(store: EventStore, sessionId: string): Promise<AtifTrajectory> {
  const model = await loadSessionModel(store, sessionId);
  // Each run's trajectory embeds its children's, so theirs are made first: read backwards, the
  // tree order has every run after the runs under it. Without recursion: a chain of handoffs
  // of any depth fits.
  const trajectories = new Map<RunRecord, AtifTrajectory>();
  const pauses = pausesOf(model);
  const order = runsInTreeOrder(model.roots);
  for (let index = order.length - 1; index >= 0; index--) {
    const { run } = order[index] as RunInTree<RunRecord>;
    const subagents = run.children.map((child) => trajectories.get(child) as AtifTrajectory);
    for (const child of run.children) trajectories.delete(child);
    trajectories.set(run, runTrajectory(model, run, subagents, pauses.get(run.runId)));
  }
  const [main, ...others] = model.roots;
  const trajectory = trajectories.get(main as RunRecord) as AtifTrajectory;
  trajectory.notes = `Projected from agent-ledger session ${sessionId} (${model.events.length} events).`;
  if (others.length > 0) {
    trajectory.subagent_trajectories = [
      ...(trajectory.subagent_trajectories ?? []),
      ...others.map((run) => trajectories.get(run) as AtifTrajectory),
    ];
  }
  return trajectory;
}
