import { resolveEvents } from "../compact/resolve.js";
import { NotFoundError } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeSession } from "../store/read-all.js";
import { ForkCopies } from "./fork-copies.js";
import { isObject } from "./langchain-message.js";

/** One model or tool attempt with its request and (if any) its outcome event. */
export interface AttemptRecord {
  kind: "model" | "tool";
  runId: string;
  stepId: string;
  attemptId: string;
  requested: LedgerEvent;
  outcome?: LedgerEvent;
  status: "requested" | "completed" | "failed" | "abandoned";
  /** A later attempt retried this one. */
  retriedBy?: string;
  /**
   * A fork's copy: the run this attempt id first appeared in (a fork copies a prefix of a run
   * with its attempt ids). The call was made there, once.
   */
  copiedFrom?: string;
}

/** A run's events, attempts and children, as the projections need them. */
export interface RunRecord {
  runId: string;
  parentRunId?: string;
  causedByEventId?: string;
  events: LedgerEvent[];
  started?: LedgerEvent;
  terminal?: LedgerEvent;
  attempts: AttemptRecord[];
  children: RunRecord[];
}

export interface SessionModel {
  sessionId: string;
  events: LedgerEvent[];
  runs: Map<string, RunRecord>;
  roots: RunRecord[];
  byEventId: Map<string, LedgerEvent>;
  /** By `attemptKey(runId, attemptId)`: a fork copies attemptIds into another run. */
  attempts: Map<string, AttemptRecord>;
}

/** Key of `SessionModel.attempts`: an attemptId is unique within its run only. */
export function attemptKey(runId: string, attemptId: string): string {
  // Ids never hold control characters (§6), so "\n" cannot occur inside either part.
  return `${runId}\n${attemptId}`;
}

const outcomeStatus: Record<string, AttemptRecord["status"]> = {
  "model.completed": "completed",
  "tool.completed": "completed",
  "model.failed": "failed",
  "tool.failed": "failed",
  "attempt.abandoned": "abandoned",
};

/** Reads a session (throws `not-found` when it has no events) and indexes it. */
export async function loadSessionModel(
  store: EventStore,
  sessionId: string,
): Promise<SessionModel> {
  // Projections show what was said: content moved to the blob store is read back in place.
  const events = await resolveEvents(store, await readWholeSession(store, sessionId));
  if (events.length === 0)
    throw new NotFoundError(`session ${sessionId} has no events`, { sessionId });
  return buildSessionModel(sessionId, events);
}

/** Indexes events already read in commit order. */
export function buildSessionModel(sessionId: string, events: LedgerEvent[]): SessionModel {
  const runs = new Map<string, RunRecord>();
  const byEventId = new Map<string, LedgerEvent>();
  const attempts = new Map<string, AttemptRecord>();
  const copies = new ForkCopies();
  for (const event of events) {
    byEventId.set(event.eventId, event);
    let run = runs.get(event.runId);
    if (!run) {
      run = { runId: event.runId, events: [], attempts: [], children: [] };
      runs.set(event.runId, run);
    }
    run.events.push(event);
    if (event.type === "run.started") {
      run.started = event;
      if (event.parentRunId !== undefined) run.parentRunId = event.parentRunId;
      if (event.causedByEventId !== undefined) run.causedByEventId = event.causedByEventId;
    } else if (
      event.type === "run.completed" ||
      event.type === "run.failed" ||
      event.type === "run.cancelled"
    ) {
      run.terminal = event;
    } else if (
      (event.type === "model.requested" || event.type === "tool.requested") &&
      event.attemptId
    ) {
      const attempt: AttemptRecord = {
        kind: event.type === "model.requested" ? "model" : "tool",
        runId: event.runId,
        stepId: event.stepId ?? event.attemptId,
        attemptId: event.attemptId,
        requested: event,
        status: "requested",
      };
      if (event.retryOf !== undefined) {
        const previous = attempts.get(attemptKey(event.runId, event.retryOf));
        if (previous) previous.retriedBy = event.attemptId;
      }
      const copiedFrom = copies.requested(event.attemptId, event.runId);
      if (copiedFrom !== undefined) attempt.copiedFrom = copiedFrom;
      attempts.set(attemptKey(event.runId, event.attemptId), attempt);
      run.attempts.push(attempt);
    } else if (event.attemptId && outcomeStatus[event.type]) {
      const attempt = attempts.get(attemptKey(event.runId, event.attemptId));
      if (attempt && attempt.status === "requested") {
        attempt.status = outcomeStatus[event.type] as AttemptRecord["status"];
        attempt.outcome = event;
      }
    }
  }
  const roots: RunRecord[] = [];
  for (const run of runs.values()) {
    const parent = run.parentRunId === undefined ? undefined : runs.get(run.parentRunId);
    if (parent) parent.children.push(run);
    else roots.push(run);
  }
  return { sessionId, events, runs, roots, byEventId, attempts };
}

/** Unresolved: requested, never completed, failed, abandoned or retried. */
export function isUnresolved(attempt: AttemptRecord): boolean {
  return attempt.status === "requested" && attempt.retriedBy === undefined;
}

/** Time of the last event of a run (or of the session). */
export function lastEventAt(events: LedgerEvent[]): string {
  return (events[events.length - 1] as LedgerEvent).recordedAt;
}

/** The attempts of `attempt`'s retry chain (`retryOf` links within its run), first first. */
export function retryChainOf(model: SessionModel, attempt: AttemptRecord): AttemptRecord[] {
  const chain = [attempt];
  let current = attempt;
  while (current.requested.retryOf !== undefined) {
    const previous = model.attempts.get(attemptKey(attempt.runId, current.requested.retryOf));
    if (!previous || chain.includes(previous)) break;
    chain.unshift(previous);
    current = previous;
  }
  return chain;
}

/** The cause of an attempt, or of the first attempt of its retry chain (`retry()` has none). */
export function causeOf(model: SessionModel, attempt: AttemptRecord): string | undefined {
  for (const link of retryChainOf(model, attempt).reverse())
    if (link.requested.causedByEventId !== undefined) return link.requested.causedByEventId;
  return undefined;
}

/** An event's payload when it is an object, else `{}` (what the projections read fields of). */
export function payloadOf(event: { payload: JsonValue } | undefined): JsonObject {
  return event && isObject(event.payload) ? event.payload : {};
}

/** The agent's version a run was started with (`startRun({ version })` or `{ agent: { version } }`). */
export function agentVersionOf(started: LedgerEvent | undefined): string | undefined {
  const payload = started?.payload;
  if (!isObject(payload)) return undefined;
  if (typeof payload.version === "string" && payload.version.length > 0) return payload.version;
  const agent = payload.agent;
  if (isObject(agent) && typeof agent.version === "string" && agent.version.length > 0)
    return agent.version;
  return undefined;
}

/**
 * The id a run's start recorded for its agent (`startRun({ agent: { id } })`), stable across the
 * agent's runs (OpenTelemetry's `gen_ai.agent.id`); undefined when it recorded none, where the
 * caller falls back to the actor's id (the agent's name with OpenAI Agents; the actor an app
 * gives the LangChain and AI SDK adapters). Never the run id, which names one run of it.
 */
export function agentIdOf(started: LedgerEvent | undefined): string | undefined {
  const agent = isObject(started?.payload) ? started.payload.agent : undefined;
  return isObject(agent) && typeof agent.id === "string" && agent.id.length > 0
    ? agent.id
    : undefined;
}
