import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent, ToolEffect } from "../events/types.js";
import type { Attempt } from "../recorder/attempt.js";
import { outcomeStatus } from "./in-flight-claims.js";

/** What the ledger holds for one recorded model or tool attempt. */
export interface RecordedAttempt {
  kind: "model" | "tool";
  stepId: string;
  attemptId: string;
  retryOf?: string;
  requested: LedgerEvent;
  /** The `*.completed`, `*.failed` or `attempt.abandoned` event, if any. */
  outcome?: LedgerEvent;
  status: "requested" | "completed" | "failed" | "abandoned";
  requestHash: string;
  toolCallId?: string;
  name?: string;
  effect?: ToolEffect;
  /** A person approved running this unresolved attempt again (`attempt.approved`). */
  approved?: boolean;
}

/** A recorded attempt matched to a call the re-executing agent is about to make. */
export interface ReplayMatch {
  attempt: RecordedAttempt;
  /** `unresolved`: requested and never resolved (the process died while it was in flight). */
  status: "completed" | "failed" | "abandoned" | "unresolved";
}

function payloadField(event: LedgerEvent, field: string): JsonValue | undefined {
  const payload = event.payload;
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  return payload[field];
}

/**
 * The `Attempt` of a recorded attempt, as `before*` would have returned it, so an adapter can
 * `retry` or `abandon` a call it found in the ledger (e.g. after a person decided).
 */
export function attemptFromRecorded(recorded: RecordedAttempt): Attempt {
  const requested = recorded.requested;
  const payload = (requested.payload ?? {}) as JsonObject;
  const attempt: Attempt = {
    kind: recorded.kind,
    sessionId: requested.sessionId,
    runId: requested.runId,
    stepId: recorded.stepId,
    attemptId: recorded.attemptId,
    requestedEventId: requested.eventId,
    seq: requested.seq,
    request: (recorded.kind === "model" ? payload.request : payload.args) ?? null,
    requestHash: recorded.requestHash,
  };
  if (recorded.retryOf !== undefined) attempt.retryOf = recorded.retryOf;
  if (requested.causedByEventId !== undefined) attempt.causedByEventId = requested.causedByEventId;
  if (recorded.toolCallId !== undefined) attempt.toolCallId = recorded.toolCallId;
  if (recorded.name !== undefined) attempt.name = recorded.name;
  if (recorded.effect !== undefined) attempt.effect = recorded.effect;
  return attempt;
}

/** Groups a run's events into attempts (in request order) with their outcomes. */
export function collectAttempts(events: readonly LedgerEvent[]): RecordedAttempt[] {
  const attempts: RecordedAttempt[] = [];
  const byId = new Map<string, RecordedAttempt>();
  for (const event of events) {
    if ((event.type === "model.requested" || event.type === "tool.requested") && event.attemptId) {
      const attempt: RecordedAttempt = {
        kind: event.type === "model.requested" ? "model" : "tool",
        stepId: event.stepId ?? event.attemptId,
        attemptId: event.attemptId,
        requested: event,
        status: "requested",
        requestHash: String(payloadField(event, "requestHash") ?? ""),
      };
      if (event.retryOf !== undefined) attempt.retryOf = event.retryOf;
      const toolCallId = payloadField(event, "toolCallId");
      if (typeof toolCallId === "string") attempt.toolCallId = toolCallId;
      const name = payloadField(event, "name");
      if (typeof name === "string") attempt.name = name;
      const effect = payloadField(event, "effect");
      if (effect && typeof effect === "object" && !Array.isArray(effect))
        attempt.effect = effect as unknown as ToolEffect;
      attempts.push(attempt);
      byId.set(attempt.attemptId, attempt);
      continue;
    }
    if (!event.attemptId) continue;
    const attempt = byId.get(event.attemptId);
    if (!attempt || attempt.outcome) continue;
    if (event.type === "attempt.approved") {
      attempt.approved = true;
      continue;
    }
    const status = outcomeStatus(event.type);
    if (status === undefined) continue;
    attempt.status = status;
    attempt.outcome = event;
  }
  return attempts;
}

/** A recorded attempt as a match: a call still `requested` is unresolved. */
export function matched(attempt: RecordedAttempt): ReplayMatch {
  return { attempt, status: attempt.status === "requested" ? "unresolved" : attempt.status };
}
