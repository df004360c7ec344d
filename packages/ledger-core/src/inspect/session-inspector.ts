import { isJsonObject, type JsonObject } from "../events/json.js";
import type { LedgerEvent, RunStatus } from "../events/types.js";
import { ForkCopies } from "../projections/fork-copies.js";
import { modelNameOf } from "../projections/model-names.js";
import { PausedRuns } from "./awaiting-decision.js";
import type {
  AttemptStatus,
  AttemptView,
  RunView,
  SessionInspection,
  StepView,
} from "./inspection-views.js";
import {
  EFFECT_IN_CHILD_RUNS_FIELD,
  HANDOFF_TO_FIELD,
  RECORDS_EVERY_CALL_FIELD,
  REFUSAL_SAVED_TYPE,
} from "./made-again.js";
import { addSeq } from "./seq-gaps.js";
import { addTokenUsage, callUsage } from "./token-usage.js";

const outcomeStatus: Record<string, AttemptStatus> = {
  "model.completed": "completed",
  "tool.completed": "completed",
  "model.failed": "failed",
  "tool.failed": "failed",
  "attempt.abandoned": "abandoned",
};

function since(start: string, end: string): number {
  return Date.parse(end) - Date.parse(start);
}

/** `inspectSession` over events already read (in commit order). */
export function inspectEvents(
  sessionId: string,
  events: readonly LedgerEvent[],
): SessionInspection {
  const inspector = new SessionInspector(sessionId);
  for (const event of events) inspector.add(event);
  return inspector.result();
}

/** Builds a `SessionInspection` incrementally from events in commit order. */
export class SessionInspector {
  readonly #sessionId: string;
  readonly #runs = new Map<string, RunView>();
  // Steps by run, then by stepId: no string concatenation per event.
  readonly #steps = new Map<string, Map<string, StepView>>();
  // Attempts by run, then by attemptId: a fork copies a run's prefix with its attemptIds, so
  // one attemptId can name an attempt in several runs, each with its own outcome.
  readonly #attempts = new Map<string, Map<string, AttemptView>>();
  readonly #order: AttemptView[] = [];
  /** A fork's copies of attempts carry no tokens: spent once, in the run that made the call. */
  readonly #copies = new ForkCopies();
  readonly #paused = new PausedRuns();
  #count = 0;

  constructor(sessionId: string) {
    this.#sessionId = sessionId;
  }

  add(event: LedgerEvent): void {
    this.#count++;
    this.#paused.add(event);
    const runs = this.#runs;
    let attempts = this.#attempts.get(event.runId);
    if (!attempts) {
      attempts = new Map();
      this.#attempts.set(event.runId, attempts);
    }
    let run = runs.get(event.runId);
    if (!run) {
      run = {
        runId: event.runId,
        status: "running",
        length: 0,
        startedAt: event.recordedAt,
        steps: [],
        children: [],
      };
      runs.set(event.runId, run);
    }
    // Seen for free as the events go by (in commit order, a run's in seq order): a deleted
    // row, whose run this view would show otherwise as if nothing were missing.
    addSeq(run, event.seq);
    switch (event.type) {
      case "run.started":
        if (event.parentRunId !== undefined) run.parentRunId = event.parentRunId;
        if (event.causedByEventId !== undefined) run.causedByEventId = event.causedByEventId;
        if (event.actor) run.actor = event.actor;
        if (isJsonObject(event.payload) && event.payload[RECORDS_EVERY_CALL_FIELD] === true)
          run.recordsEveryCall = true;
        run.startedAt = event.recordedAt;
        break;
      case "run.completed":
      case "run.failed":
      case "run.cancelled":
        run.status = event.type.slice(4) as RunStatus;
        run.endedAt = event.recordedAt;
        run.durationMs = since(run.startedAt, event.recordedAt);
        run.result = event.payload;
        break;
      case "model.requested":
      case "tool.requested": {
        if (!event.attemptId) break;
        const kind = event.type === "model.requested" ? "model" : "tool";
        const payload = (event.payload ?? {}) as JsonObject;
        const stepId = event.stepId ?? event.attemptId;
        const attempt: AttemptView = {
          kind,
          attemptId: event.attemptId,
          stepId,
          runId: event.runId,
          status: "requested",
          requestedAt: event.recordedAt,
          requestSeq: event.seq,
          requestEventId: event.eventId,
          request:
            kind === "model"
              ? (payload.request ?? null)
              : {
                  name: payload.name ?? null,
                  args: payload.args ?? null,
                  effect: payload.effect ?? null,
                },
        };
        if (event.retryOf !== undefined) {
          attempt.retryOf = event.retryOf;
          const previous = attempts.get(event.retryOf);
          if (previous) previous.retriedBy = event.attemptId;
        }
        if (kind === "tool") {
          if (typeof payload.name === "string") attempt.name = payload.name;
          if (typeof payload.toolCallId === "string") attempt.toolCallId = payload.toolCallId;
          if (payload.effect !== undefined) attempt.effect = payload.effect;
          if (event.metadata?.[EFFECT_IN_CHILD_RUNS_FIELD] === true)
            attempt.effectInChildRuns = true;
          const handoffTo = event.metadata?.[HANDOFF_TO_FIELD];
          if (typeof handoffTo === "string") attempt.handoffTo = handoffTo;
        } else {
          // The name each framework records (`model`, AI SDK `{ provider, modelId }`, LangChain
          // invocation params...), read as the projections read it; else the one an adapter
          // noted in the metadata (OpenAI Agents: its requests carry no model name).
          const model = modelNameOf(payload.request, event.metadata);
          if (model !== undefined) attempt.name = model;
        }
        this.#copies.requested(event.attemptId, event.runId);
        attempts.set(event.attemptId, attempt);
        this.#order.push(attempt);
        let runSteps = this.#steps.get(event.runId);
        if (!runSteps) {
          runSteps = new Map();
          this.#steps.set(event.runId, runSteps);
        }
        let step = runSteps.get(stepId);
        if (!step) {
          step = { stepId, kind, attempts: [] };
          runSteps.set(stepId, step);
          run.steps.push(step);
        }
        step.attempts.push(attempt);
        break;
      }
      default: {
        if (event.type === REFUSAL_SAVED_TYPE && event.attemptId) {
          const refused = attempts.get(event.attemptId);
          if (refused?.status === "requested" && refused.kind === "tool")
            refused.refusalSaved = true;
          break;
        }
        if (event.type === "attempt.approved" && event.attemptId) {
          const approved = attempts.get(event.attemptId);
          if (approved?.status === "requested") {
            approved.approvedAt = event.recordedAt;
            if (event.actor?.id !== undefined) approved.approvedBy = event.actor.id;
            const reason = (event.payload as { reason?: unknown } | null)?.reason;
            if (typeof reason === "string") approved.approvalReason = reason;
          }
          break;
        }
        const status = outcomeStatus[event.type];
        if (status === undefined || !event.attemptId) break;
        const attempt = attempts.get(event.attemptId);
        if (attempt?.status !== "requested") break;
        attempt.status = status;
        attempt.resolvedAt = event.recordedAt;
        attempt.durationMs = since(attempt.requestedAt, event.recordedAt);
        const payload = (event.payload ?? {}) as JsonObject;
        attempt.outcome =
          payload.response ?? payload.result ?? payload.error ?? payload.reason ?? event.payload;
        if (status === "abandoned" && payload.declined === true) attempt.declined = true;
        if (
          (event.type === "model.completed" || event.type === "model.failed") &&
          !this.#copies.isCopy(event.attemptId, event.runId)
        ) {
          const usage = callUsage(payload, event.type === "model.failed");
          if (usage !== undefined) attempt.usage = usage;
        }
      }
    }
  }

  result(): SessionInspection {
    const roots: RunView[] = [];
    for (const run of this.#runs.values()) {
      const parent = run.parentRunId === undefined ? undefined : this.#runs.get(run.parentRunId);
      if (parent) parent.children.push(run);
      else roots.push(run);
    }
    this.#paused.mark(roots);
    const unresolved = this.#order.filter(
      (attempt) => attempt.status === "requested" && attempt.retriedBy === undefined,
    );
    const inspection: SessionInspection = {
      sessionId: this.#sessionId,
      eventCount: this.#count,
      runs: roots,
      unresolved,
    };
    const usage = addTokenUsage(roots);
    if (usage !== undefined) inspection.usage = usage;
    return inspection;
  }
}
