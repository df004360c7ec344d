import { ConflictError, DuplicateEventError, RunClosedError } from "../events/errors.js";
import { plannedEventHash, writerContent } from "../events/hash-chain.js";
import {
  type LedgerEvent,
  type RunHead,
  SCHEMA_VERSION,
  statusOfType,
  TERMINAL_TYPES,
} from "../events/types.js";
import type { ValidAppend, ValidEvent } from "./validate.js";

/** What a store read inside its append transaction, for `planAppend` to decide on. */
export interface AppendState {
  request: ValidAppend;
  /** The run's head as locked by the transaction. */
  head: RunHead;
  /** Stored events of the session whose eventId is one of the batch's. */
  existing: LedgerEvent[];
  /** ISO time of acceptance. */
  now: string;
}

/** An event planned for writing: everything but the commit cursor, which the store assigns. */
export type PlannedEvent = Omit<LedgerEvent, "commitCursor">;

export type AppendPlan =
  | { kind: "deduplicated"; events: LedgerEvent[] }
  | { kind: "write"; events: PlannedEvent[]; head: RunHead };

/** An empty head, for a run that does not exist yet. */
export const EMPTY_HEAD: RunHead = Object.freeze({
  exists: false,
  length: 0,
  status: "running",
  lastHash: null,
});

/**
 * The append algorithm of §4, shared by every store: given what the transaction read, decide
 * between an idempotent no-op, an error, or the exact rows to write. Pure: no I/O, no clock.
 *
 * Order of checks: a batch that closes the run before its last event is `run-closed` (it says
 * so by itself, whatever is stored, and no such batch is ever stored, so no retry is refused:
 * every store answers it alike, also those that skip the lookup of ids on their fast path); a
 * batch already stored (same ids, same content, same run) is a success with
 * `deduplicated: true` even on a closed run; an id stored with other content is
 * `duplicate-event`; then `run-closed`; then `conflict`.
 */
export function planAppend(state: AppendState): AppendPlan {
  const { request, head, existing } = state;
  const closing = request.events.findIndex((event) => TERMINAL_TYPES.has(event.type));
  if (closing !== -1 && closing !== request.events.length - 1) {
    throw new RunClosedError({
      sessionId: request.sessionId,
      runId: request.runId,
      status: statusOfType(request.events[closing]?.type ?? ""),
    });
  }
  if (existing.length > 0) {
    const byId = new Map(existing.map((event) => [event.eventId, event]));
    const matched: LedgerEvent[] = [];
    request.events.forEach((event, index) => {
      const stored = byId.get(event.eventId);
      if (stored === undefined) return;
      const path = `$.events[${index}].eventId`;
      if (stored.runId !== request.runId) {
        throw new DuplicateEventError({
          eventId: event.eventId,
          path,
          reason: `event ${event.eventId} already exists in run ${stored.runId} of this session`,
        });
      }
      if (writerContent(stored) !== writerContent(event)) {
        throw new DuplicateEventError({ eventId: event.eventId, path });
      }
      matched.push(stored);
    });
    if (matched.length === request.events.length) {
      return { kind: "deduplicated", events: matched };
    }
    const first = request.events.findIndex((event) => byId.has(event.eventId));
    throw new DuplicateEventError({
      eventId: request.events[first]?.eventId ?? "",
      path: `$.events[${first}].eventId`,
      reason: "part of this batch is already stored: a retry must resend exactly the same batch",
    });
  }
  if (head.status !== "running") {
    throw new RunClosedError({
      sessionId: request.sessionId,
      runId: request.runId,
      status: head.status,
    });
  }
  if (head.length !== request.expectedSeq) {
    throw new ConflictError({
      sessionId: request.sessionId,
      runId: request.runId,
      expectedSeq: request.expectedSeq,
      actualSeq: head.length,
    });
  }
  let prevHash = head.lastHash;
  let status: RunHead["status"] = head.status;
  const events = request.events.map((event, index) => {
    const planned = buildEvent(request, event, request.expectedSeq + index, prevHash, state.now);
    prevHash = planned.hash;
    if (TERMINAL_TYPES.has(event.type)) status = statusOfType(event.type);
    return planned;
  });
  return {
    kind: "write",
    events,
    head: { exists: true, length: request.expectedSeq + events.length, status, lastHash: prevHash },
  };
}

/** Builds the stored form of an event (fixed key order, so stored JSON reads the same everywhere). */
export function buildEvent(
  address: { sessionId: string; runId: string },
  event: ValidEvent,
  seq: number,
  prevHash: string | null,
  recordedAt: string,
): PlannedEvent {
  const planned = {
    schemaVersion: SCHEMA_VERSION,
    eventId: event.eventId,
    sessionId: address.sessionId,
    runId: address.runId,
    seq,
    type: event.type,
  } as PlannedEvent;
  if (event.stepId !== undefined) planned.stepId = event.stepId;
  if (event.attemptId !== undefined) planned.attemptId = event.attemptId;
  if (event.retryOf !== undefined) planned.retryOf = event.retryOf;
  if (event.parentRunId !== undefined) planned.parentRunId = event.parentRunId;
  if (event.causedByEventId !== undefined) planned.causedByEventId = event.causedByEventId;
  if (event.actor !== undefined) planned.actor = event.actor;
  planned.recordedAt = recordedAt;
  planned.payload = event.payload;
  if (event.evidenceRefs !== undefined) planned.evidenceRefs = event.evidenceRefs;
  if (event.metadata !== undefined) planned.metadata = event.metadata;
  planned.prevHash = prevHash;
  planned.hash = plannedEventHash(planned);
  return planned;
}

/** Gives planned events their commit cursors, `first`, `first + 1`, ... */
export function assignCursors(events: PlannedEvent[], first: number): LedgerEvent[] {
  // Planned events are fresh objects owned by the store, so they are completed in place.
  const out = events as LedgerEvent[];
  for (let index = 0; index < out.length; index++)
    (out[index] as LedgerEvent).commitCursor = first + index;
  return out;
}

/**
 * Plans a fork: the events of `source` (a prefix of a run) re-addressed to `newRunId` with new
 * event ids and a new hash chain. Causal links that pointed inside the prefix point to the
 * copies, so the fork's DAG is self-contained.
 */
export function planFork(options: {
  sessionId: string;
  newRunId: string;
  source: LedgerEvent[];
  newEventId: () => string;
  now: string;
}): { events: PlannedEvent[]; head: RunHead } {
  const ids = new Map(options.source.map((event) => [event.eventId, options.newEventId()]));
  let prevHash: string | null = null;
  let status: RunHead["status"] = "running";
  const events = options.source.map((event, index) => {
    const copy: ValidEvent = {
      eventId: ids.get(event.eventId) as string,
      type: event.type,
      payload: event.payload,
    };
    if (event.stepId !== undefined) copy.stepId = event.stepId;
    if (event.attemptId !== undefined) copy.attemptId = event.attemptId;
    if (event.retryOf !== undefined) copy.retryOf = event.retryOf;
    if (event.parentRunId !== undefined) copy.parentRunId = event.parentRunId;
    if (event.causedByEventId !== undefined)
      copy.causedByEventId = ids.get(event.causedByEventId) ?? event.causedByEventId;
    if (event.actor !== undefined) copy.actor = event.actor;
    if (event.evidenceRefs !== undefined) copy.evidenceRefs = event.evidenceRefs;
    if (event.metadata !== undefined) copy.metadata = event.metadata;
    const planned = buildEvent(
      { sessionId: options.sessionId, runId: options.newRunId },
      copy,
      index,
      prevHash,
      options.now,
    );
    prevHash = planned.hash;
    if (TERMINAL_TYPES.has(event.type)) status = statusOfType(event.type);
    return planned;
  });
  return { events, head: { exists: true, length: events.length, status, lastHash: prevHash } };
}
