import type { JsonObject, JsonValue } from "../events/json.js";
import type { AwaitingDecisionView } from "../inspect/awaiting-decision.js";
import { type RunInTree, runsInTreeOrder } from "../inspect/run-tree-order.js";
import type { EventStore } from "../store/event-store.js";
import { argumentsObject, asContent } from "./atif-content.js";
import { hostedAtifCalls, markProgramCallers } from "./atif-hosted-calls.js";
import { imagesObserved, readByModel } from "./atif-observed.js";
import {
  addTokens,
  attemptMetrics,
  retriedAttemptsOf,
  shownAttemptOf,
  type TokenTotals,
  unfinishedExtra,
} from "./atif-retries.js";
import { errorText, startSteps, withoutStacks } from "./atif-run-ends.js";
import type {
  AtifMetrics,
  AtifObservationResult,
  AtifStep,
  AtifSubagentRef,
  AtifToolCall,
  AtifTrajectory,
} from "./atif-types.js";
import { UserConversations, userInputContents, userStep } from "./atif-user-steps.js";
import {
  completionOf,
  isEmbeddingsRequest,
  isObject,
  modelNameOf,
  requestMessages,
  textOf,
  toolResultOf,
} from "./extract.js";
import { hostedCallAnswersOf } from "./hosted-call-answers.js";
import { pausesOf, runStatus } from "./paused-runs.js";
import {
  type AttemptRecord,
  agentVersionOf,
  attemptKey,
  isUnresolved,
  loadSessionModel,
  payloadOf,
  type RunRecord,
  retryChainOf,
  type SessionModel,
} from "./session-model.js";

interface DraftStep {
  /** commitCursor of the event the step is anchored at (orders the steps). */
  at: number;
  step: Omit<AtifStep, "step_id">;
  /** eventIds this step stands for (a child run caused by one is referenced from it). */
  causes: string[];
  /** tool.requested eventId -> the observation result of that call. */
  resultsByCause: Map<string, AtifObservationResult>;
}

function toolCallOf(attempt: AttemptRecord): AtifToolCall {
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
 * `imagesObserved`) is ATIF content parts, the images it cannot show named in
 * `extra.images_omitted`, the files in `extra.files_omitted`. A call without a result of its
 * own (failed, abandoned) is what the model read of it in the run's next request, as its
 * adapter worded it ("Tool call rejected: ...", "An error occurred while running the
 * tool..."), else what the adapter recorded it told the model, else the error or the abandon's
 * reason; the error and the reason are kept in `extra`.
 */
function observationOf(attempt: AttemptRecord, run: RunRecord): AtifObservationResult {
  const call = toolCallOf(attempt);
  const outcome = payloadOf(attempt.outcome);
  if (attempt.status === "completed") {
    const images = imagesObserved(run, attempt);
    if (images === undefined)
      return {
        source_call_id: call.tool_call_id,
        content: asContent(toolResultOf(outcome.result)),
      };
    return {
      source_call_id: call.tool_call_id,
      content: images.content,
      ...(Object.keys(images.extra).length > 0 ? { extra: images.extra } : {}),
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

/** A paused run's pause, as its trajectory's `extra.awaiting_decision` says it. */
function awaitingDecisionOf(pause: AwaitingDecisionView): JsonObject {
  return {
    since: pause.since,
    calls: pause.calls.map((call) => ({
      name: call.name,
      ...(call.toolCallId !== undefined ? { tool_call_id: call.toolCallId } : {}),
      ...(call.args !== undefined ? { arguments: call.args } : {}),
      ...(call.agent !== undefined ? { agent: call.agent } : {}),
    })),
    ...(pause.decideWith !== undefined ? { decide_with: pause.decideWith } : {}),
  };
}

/** The last of `drafts` (ascending `at`) with `at <= at`, if any. */
function lastAtOrBefore(drafts: DraftStep[], at: number): DraftStep | undefined {
  let low = 0;
  let high = drafts.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((drafts[middle] as DraftStep).at <= at) low = middle + 1;
    else high = middle;
  }
  return drafts[low - 1];
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
  // Each system prompt the run's model calls were given, shown once, where first given: a later
  // call with other instructions (a second conversation, a side call) is not shown the first's.
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
      const system = requestMessages(request)
        .filter((message) => message.role === "system")
        .map((message) => textOf(message.content))
        .join("\n");
      if (system.length > 0 && !systemsShown.has(system)) {
        // The first instructions come first, as the model reads them: before the user's input
        // where the loop recorded that before its first call.
        const before =
          systemsShown.size === 0 &&
          firstInput !== undefined &&
          firstInput.commitCursor < event.commitCursor;
        systemsShown.add(system);
        drafts.push({
          at: (before ? firstInput.commitCursor : event.commitCursor) - 0.5,
          step: {
            timestamp: before ? firstInput.recordedAt : event.recordedAt,
            source: "system",
            message: system,
          },
          causes: [],
          resultsByCause: new Map(),
        });
      }
      if (!inputsRecorded && event.retryOf === undefined) {
        for (const message of conversations.added(request))
          drafts.push({
            at: event.commitCursor - 0.25,
            step: userStep(event, message.content),
            causes: [],
            resultsByCause: new Map(),
          });
      }
      // A retried model call is one step, at the place of its last attempt: the attempt that
      // completed (else the last) shows it, the others are said in its `extra`.
      if (attempt.retriedBy !== undefined) continue;
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
      const calls: AtifToolCall[] = [];
      const results: AtifObservationResult[] = [];
      for (const tool of tools) {
        claimed.add(tool.attemptId);
        const chain = chainOf(tool);
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
        markProgramCallers(calls, outcome.response);
        const hosted = hostedAtifCalls({
          response: outcome.response,
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
      drafts.push(draft);
    } else if (!claimed.has(attempt.attemptId)) {
      // A tool call no model completion of this run asked for (direct or cross-run).
      const result = observationOf(attempt, run);
      drafts.push({
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
      });
    }
  }

  // Child runs: embedded, referenced from the step that caused them. The steps are indexed by
  // the events they answer, and the agent steps kept in commit order, so each child is placed
  // by a lookup: a scan of every step per child was quadratic (5,000 sub-agents: 3 s).
  const draftByCause = new Map<string, DraftStep>();
  const agentDrafts: DraftStep[] = [];
  for (const draft of drafts) {
    for (const cause of draft.causes) if (!draftByCause.has(cause)) draftByCause.set(cause, draft);
    if (draft.step.source === "agent") agentDrafts.push(draft);
  }
  const stepsBeforeChildren = drafts.length;
  for (const child of run.children) {
    const ref: AtifSubagentRef = { trajectory_id: child.runId, session_id: model.sessionId };
    const cause = child.causedByEventId;
    let draft = cause ? draftByCause.get(cause) : undefined;
    const startedAt = child.started?.commitCursor ?? child.events[0]?.commitCursor ?? 0;
    // Else the last agent step at or before the child's start: among the steps made for earlier
    // children (the latest made first), then among the run's own, by binary search.
    for (let index = drafts.length - 1; !draft && index >= stepsBeforeChildren; index--) {
      const candidate = drafts[index] as DraftStep;
      if (candidate.at <= startedAt) draft = candidate;
    }
    if (!draft) draft = lastAtOrBefore(agentDrafts, startedAt);
    if (!draft) {
      draft = {
        at: startedAt,
        step: {
          timestamp: child.started?.recordedAt ?? child.events[0]?.recordedAt ?? "",
          source: "agent",
          message: `started sub-agent ${child.started?.actor?.id ?? child.runId}`,
          llm_call_count: 0,
        },
        causes: [],
        resultsByCause: new Map(),
      };
      drafts.push(draft);
    }
    const existing = cause ? draft.resultsByCause.get(cause) : undefined;
    if (existing) {
      if (existing.subagent_trajectory_ref) existing.subagent_trajectory_ref.push(ref);
      else existing.subagent_trajectory_ref = [ref];
    } else {
      const observation = draft.step.observation ?? { results: [] };
      observation.results.push({ content: null, subagent_trajectory_ref: [ref] });
      draft.step.observation = observation;
    }
  }

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
