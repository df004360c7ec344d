import type { JsonObject, JsonValue } from "./json.js";

/** Version of the envelope format written by this package. */
export const SCHEMA_VERSION = 1 as const;

/** The event types of §3. Custom types use the `x.` prefix. */
export const EVENT_TYPES = [
  "run.started",
  "run.completed",
  "run.failed",
  "run.cancelled",
  "model.requested",
  "model.completed",
  "model.failed",
  "tool.requested",
  "tool.completed",
  "tool.failed",
  "attempt.abandoned",
  "attempt.approved",
  "input.received",
  "checkpoint.saved",
  "evidence.recorded",
] as const;

export type KnownEventType = (typeof EVENT_TYPES)[number];
export type CustomEventType = `x.${string}`;
export type EventType = KnownEventType | CustomEventType;

/** Types that close a run: every later append fails with `run-closed`. */
export const TERMINAL_TYPES: ReadonlySet<string> = new Set([
  "run.completed",
  "run.failed",
  "run.cancelled",
]);

/** Status of a run, derived from its terminal event. */
export type RunStatus = "running" | "completed" | "failed" | "cancelled";

/** Who produced an event. */
export interface Actor {
  type: "agent" | "tool" | "human" | "system";
  id: string;
  framework?: string;
}

/** What a tool call does to the world; decides whether it may run again after a crash. */
export interface ToolEffect {
  kind: "none" | "read" | "write" | "unknown";
  idempotent: boolean;
}

/** An event as a writer hands it to `EventStore.append`. The store fills in the rest. */
export interface NewEvent {
  /** Idempotency key, unique within the session. A UUIDv7 is made when omitted. */
  eventId?: string;
  type: EventType;
  stepId?: string;
  attemptId?: string;
  retryOf?: string;
  parentRunId?: string;
  causedByEventId?: string;
  actor?: Actor;
  payload?: JsonValue;
  evidenceRefs?: string[];
  metadata?: JsonObject;
}

/** A committed event: the wire format of every store and every export. */
export interface LedgerEvent {
  schemaVersion: typeof SCHEMA_VERSION;
  eventId: string;
  sessionId: string;
  runId: string;
  /** Gap-free position in the run, from 0. */
  seq: number;
  /** Gap-free, strictly increasing per session, in commit order (from 1). */
  commitCursor: number;
  type: EventType;
  stepId?: string;
  attemptId?: string;
  retryOf?: string;
  parentRunId?: string;
  causedByEventId?: string;
  actor?: Actor;
  /** ISO time the store accepted the event. Metadata, never logic. */
  recordedAt: string;
  payload: JsonValue;
  evidenceRefs?: string[];
  metadata?: JsonObject;
  /** Hash of the previous event of the run (null for seq 0). */
  prevHash: string | null;
  /** sha256 over the canonical JSON of this event without `hash` and `commitCursor`. */
  hash: string;
}

/** The head of a run as a writer needs it for optimistic concurrency. */
export interface RunHead {
  exists: boolean;
  length: number;
  status: RunStatus;
  lastHash: string | null;
}

/** Status a terminal event type gives its run. */
export function statusOfType(type: string): RunStatus {
  switch (type) {
    case "run.completed":
      return "completed";
    case "run.failed":
      return "failed";
    case "run.cancelled":
      return "cancelled";
    default:
      return "running";
  }
}
