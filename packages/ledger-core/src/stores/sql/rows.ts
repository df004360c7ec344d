import type { LedgerEvent, RunHead, RunStatus } from "../../events/types.js";
import type { RunSummary, SessionSummary } from "../../store/event-store.js";
import { parseStoredEvent, type StoredEventPlace } from "../../store/unreadable-event.js";

/** A row of the events table, as every dialect inserts it. */
export interface EventRow {
  sessionId: string;
  runId: string;
  seq: number;
  commitCursor: number;
  eventId: string;
  eventType: string;
  recordedAt: string;
  /** The whole event JSON exactly as readers get it back. */
  body: string;
}

/** A row of the runs table. */
export interface HeadRow {
  runLength: number;
  status: string;
  lastHash: string | null;
}

export interface RunRow extends HeadRow {
  runId: string;
  parentRunId: string | null;
  startedAt: string;
}

export interface SessionRow {
  sessionId: string;
  lastCursor: number;
  createdAt: string;
  updatedAt: string;
}

export function eventRow(event: LedgerEvent): EventRow {
  return {
    sessionId: event.sessionId,
    runId: event.runId,
    seq: event.seq,
    commitCursor: event.commitCursor,
    eventId: event.eventId,
    eventType: event.type,
    recordedAt: event.recordedAt,
    body: JSON.stringify(event),
  };
}

/** The event a stored body holds; `tamper-detected` (at `place`, if given) if it is not one. */
export function parseBody(body: string, place?: () => StoredEventPlace): LedgerEvent {
  return parseStoredEvent(body, place ?? (() => ({})));
}

export function headOf(row: HeadRow): RunHead {
  return {
    exists: true,
    length: Number(row.runLength),
    status: row.status as RunStatus,
    lastHash: row.lastHash,
  };
}

export function runSummary(row: RunRow): RunSummary {
  const summary: RunSummary = {
    runId: row.runId,
    length: Number(row.runLength),
    status: row.status as RunStatus,
    lastHash: row.lastHash,
    startedAt: row.startedAt,
  };
  if (row.parentRunId !== null) summary.parentRunId = row.parentRunId;
  return summary;
}

export function sessionSummary(row: SessionRow): SessionSummary {
  return {
    sessionId: row.sessionId,
    eventCount: Number(row.lastCursor),
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}
