import type { JsonValue } from "../events/json.js";
import type { Actor, RunStatus } from "../events/types.js";
import type { TokenUsage } from "../projections/model-usage.js";
import type { AwaitingDecisionView } from "./awaiting-decision.js";
import type { SeqGap } from "./seq-gaps.js";

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
  /**
   * Set on a tool call in flight whose refusal, on a resume, the agent was handed as its result
   * and saved (an adapter's `REFUSAL_SAVED_TYPE` event): no resume makes it again, even approved.
   */
  refusalSaved?: true;
  /**
   * Set on a call declined before it started (`declineToolCall`: its abandonment says so): it
   * never ran, where another abandoned call may have had its effect before a crash.
   */
  declined?: true;
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
  seqGap?: SeqGap;
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
