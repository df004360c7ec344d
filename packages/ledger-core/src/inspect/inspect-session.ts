import {
  BlobCache,
  checkBlobs,
  markedEvents,
  resolveEvents,
  resolvePayload,
} from "../compact/resolve.js";
import { assertOneOf, assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { LedgerError } from "../events/errors.js";
import { isJsonObject, type JsonObject, type JsonValue } from "../events/json.js";
import type { Actor, LedgerEvent, RunStatus } from "../events/types.js";
import { modelNameOf, type TokenUsage } from "../projections/extract.js";
import { ForkCopies } from "../projections/fork-copies.js";
import type { EventStore, RunSummary } from "../store/event-store.js";
import { assertEventStore } from "../store/validate.js";
import { type AwaitingDecisionView, PausedRuns, resolvePauses } from "./awaiting-decision.js";
import {
  EFFECT_IN_CHILD_RUNS_FIELD,
  HANDOFF_TO_FIELD,
  RECORDS_EVERY_CALL_FIELD,
} from "./made-again.js";
import { addTokenUsage, callUsage } from "./token-usage.js";

/** Status of one attempt as inspection reports it. */
export type AttemptStatus = "requested" | "completed" | "failed" | "abandoned";

export interface AttemptView {
  kind: "model" | "tool";
  attemptId: string;
  stepId: string;
  runId: string;
  status: AttemptStatus;
  retryOf?: string;
  /** Set when a later attempt retried this one (so it is no longer in flight). */
  retriedBy?: string;
  /** Set when a person approved running this unresolved attempt again on the next resume. */
  approvedAt?: string;
  /** Who approved it (the approval's actor id) and why (its reason), with `approvedAt`. */
  approvedBy?: string;
  approvalReason?: string;
  name?: string;
  toolCallId?: string;
  effect?: JsonValue;
  /**
   * Set on a tool call whose effect is that of the calls its child runs record (its request's
   * metadata says so: `EFFECT_IN_CHILD_RUNS_FIELD`), such as an agent used as a tool.
   */
  effectInChildRuns?: true;
  /**
   * Set on a tool call that hands off to another agent, to the agent's name (its request's
   * metadata says so: `HANDOFF_TO_FIELD`): the model reads no result of it.
   */
  handoffTo?: string;
  requestedAt: string;
  resolvedAt?: string;
  durationMs?: number;
  requestSeq: number;
  requestEventId: string;
  /** The request payload (model request, or `{ name, args, effect }` of a tool call). */
  request: JsonValue;
  /** The outcome payload (response / result / error / abandonment reason). */
  outcome?: JsonValue;
  /**
   * Tokens a model call's outcome reports (`usageOf` of its response, or of the partial
   * response of a failed call), when it reports any. Not on a fork's copy of a call another run
   * requested first: those tokens were spent once, and count there (as in `toOtelSpans`).
   */
  usage?: TokenUsage;
}

export interface StepView {
  stepId: string;
  kind: "model" | "tool";
  attempts: AttemptView[];
}

export interface RunView {
  runId: string;
  parentRunId?: string;
  causedByEventId?: string;
  actor?: Actor;
  status: RunStatus;
  length: number;
  startedAt: string;
  endedAt?: string;
  durationMs?: number;
  steps: StepView[];
  children: RunView[];
  /** Payload of the terminal event (output, error or reason). */
  result?: JsonValue;
  /** Set while the run is paused until a person decides on calls (see `AwaitingDecisionView`). */
  awaitingDecision?: AwaitingDecisionView;
  /**
   * Set when the run's events as read are not gap-free from seq 0: the first place where the
   * seq after `after` is not `after + 1` but `next` (`after` is -1 when the run's first event
   * read is not seq 0), or, when its last events are missing, where they stop (`after`) and the
   * run's length as the store records it (`next`: seqs `after + 1` to `next - 1` are missing).
   * Events were deleted (or the store returned them out of order): what this view says of the
   * run (its status, its calls in flight, `length`) is not what was recorded. `verifyRun` says
   * what else fails.
   */
  seqGap?: { after: number; next: number };
  /**
   * Set when its `run.started` says it records every call its agent makes
   * (`RECORDS_EVERY_CALL_FIELD`).
   */
  recordsEveryCall?: true;
  /** The tokens its own model calls report (`AttemptView.usage`), its child runs' not counted. */
  usage?: TokenUsage;
}

export interface SessionInspection {
  sessionId: string;
  eventCount: number;
  /** Root runs (no parent, or a parent not in this session), children nested. */
  runs: RunView[];
  /** Every attempt requested and never completed, failed, abandoned or retried. */
  unresolved: AttemptView[];
  /** The tokens every model call of the session reports, when any reports some. */
  usage?: TokenUsage;
  /**
   * With `missingBlobs: "keep"`: refs events name whose blobs are not in the store (their
   * markers are shown as stored). Absent when nothing is missing.
   */
  missingBlobs?: string[];
}

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

/**
 * What happened in a session (§7): runs as a tree with statuses, steps and attempts, and
 * every unresolved attempt — calls that went out and never came back. One pass over the
 * session's events in commit order, page by page, so envelopes can be collected as it goes.
 */
export async function inspectSession(
  store: EventStore,
  sessionId: string,
  options: InspectOptions = {},
): Promise<SessionInspection> {
  assertEventStore(store);
  // `{ resolv: false }` read every blob of a long session it was told not to.
  assertOptions(options, INSPECT_OPTIONS, "inspectSession", { keysAt: "$" });
  assertOneOf(options.resolve, "$.resolve", [true, false, "in-flight"]);
  assertOneOf(options.missingBlobs, "$.missingBlobs", ["throw", "keep"]);
  const inspector = new SessionInspector(sessionId);
  const cache = new BlobCache();
  const resolveOptions = {
    cache,
    ...(options.missingBlobs ? { missingBlobs: options.missingBlobs } : {}),
  };
  const mode = options.resolve ?? true;
  // In-flight mode: the blobs the full mode would read, checked at the end (none may be lost
  // unsaid, and none more is read).
  const named = new Set<string>();
  // Read before the events, so a run written meanwhile reads longer than recorded here, never
  // shorter: shorter means its last events are gone (see `RunView.seqGap`).
  const recorded = await recordedRuns(store, sessionId);
  let after = 0;
  for (;;) {
    const page = await store.readSession({ sessionId, after, limit: PAGE_SIZE });
    const events =
      mode === true
        ? await resolveEvents(store, page.events, resolveOptions)
        : await resolvePauses(store, page.events, resolveOptions);
    for (const event of events) inspector.add(event);
    if (mode === "in-flight") for (const ref of markedEvents(page.events).refs) named.add(ref);
    if (page.events.length < PAGE_SIZE) break;
    after = page.nextCursor;
  }
  const inspection = inspector.result();
  markMissingTails(inspection.runs, recorded);
  if (mode === "in-flight") {
    await checkBlobs(store, named, resolveOptions);
    await resolveInFlight(inspection, (value) => resolvePayload(store, value, resolveOptions));
  }
  if (cache.missing.size > 0) inspection.missingBlobs = [...cache.missing].sort();
  return inspection;
}

/**
 * The session's runs as the store records them, for `markMissingTails`; none where a run's
 * stored head cannot be read (an open run's last row changed by hand): the read of the events
 * then names that row as it meets it.
 */
async function recordedRuns(store: EventStore, sessionId: string): Promise<RunSummary[]> {
  try {
    return await store.listRuns(sessionId);
  } catch (error) {
    if (LedgerError.isInstance(error, "tamper-detected")) return [];
    throw error;
  }
}

/**
 * Marks each run (of the tree) the store records as longer than its events read: its last
 * events were deleted, a closed run's end among them (a completed payment would read as in
 * flight). A gap found earlier in the run stays the one reported.
 */
function markMissingTails(runs: RunView[], recorded: RunSummary[]): void {
  const lengths = new Map(recorded.map((run) => [run.runId, run.length]));
  const stack = [...runs];
  for (let run = stack.pop(); run !== undefined; run = stack.pop()) {
    // One push per child: spread, 160,000 child runs overflowed the stack.
    for (const child of run.children) stack.push(child);
    const length = lengths.get(run.runId);
    if (length !== undefined && length > run.length && run.seqGap === undefined)
      run.seqGap = { after: run.length - 1, next: length };
  }
}

/**
 * Resolves, in place, the requests of the unresolved attempts, every outcome and every run's
 * result: all but the requests of attempts that got an outcome (see `InspectOptions.resolve`).
 */
async function resolveInFlight(
  inspection: SessionInspection,
  resolve: (value: JsonValue) => Promise<JsonValue>,
): Promise<void> {
  for (const attempt of inspection.unresolved) attempt.request = await resolve(attempt.request);
  const runs = [...inspection.runs];
  for (let run = runs.pop(); run !== undefined; run = runs.pop()) {
    if (run.result !== undefined) run.result = await resolve(run.result);
    // A paused run's calls are resolved as read (`resolvePauses`): not resolved a second time.
    for (const step of run.steps)
      for (const attempt of step.attempts)
        if (attempt.outcome !== undefined) attempt.outcome = await resolve(attempt.outcome);
    for (const child of run.children) runs.push(child);
  }
}

const PAGE_SIZE = 5000;

const INSPECT_OPTIONS: KnownKeys<InspectOptions> = { resolve: true, missingBlobs: true };

export interface InspectOptions {
  /**
   * Resolve blob references (§8) in requests and outcomes (default true). `false` shows them
   * as stored: `{ "$ledger": "text" | "json" | "list", "ref": "sha256:..." }` markers.
   * `"in-flight"` resolves what a person deciding about the session reads: the requests of
   * unresolved attempts, every outcome and run result; the requests of attempts that got an
   * outcome stay as stored. Every model request re-sends the conversation, so with them all
   * resolved the inspection's JSON grows with the square of its length (300 turns of 2 KB
   * messages: 100 MB; 1,000 turns: past the longest string V8 makes). Every blob an event
   * names is still checked (`missingBlobs`). A paused run's calls (`awaitingDecision`) are
   * resolved in every mode: stored as blobs, as stored they would name no call.
   */
  resolve?: boolean | "in-flight";
  /**
   * A blob an event names that is not in the store: `"throw"` (default, `not-found`) or
   * `"keep"` its marker as stored and list its ref in `missingBlobs`, so what was in flight
   * can still be read after a blob was lost.
   */
  missingBlobs?: "throw" | "keep";
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
    if (event.seq !== run.length && run.seqGap === undefined)
      run.seqGap = { after: run.length - 1, next: event.seq };
    run.length = event.seq + 1;
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
