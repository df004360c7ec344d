import type { JsonObject, JsonValue, LedgerEvent } from "@agent-ledger/core";

// What the ledger holds for the tool calls one model completion asked for, as the restore of a
// conversation reads it.

/** The event's payload, if it is an object; else `{}`. */
export function payloadOf(event: LedgerEvent): JsonObject {
  const payload = event.payload;
  return payload !== null && typeof payload === "object" && !Array.isArray(payload) ? payload : {};
}

/** The events that end a tool call's attempt. */
export const OUTCOME_TYPES = new Set(["tool.completed", "tool.failed", "attempt.abandoned"]);

/** What the ledger holds for the tool calls of one completion, by toolCallId. */
export interface ToolCallRecords {
  /** The last outcome of each call (a retry supersedes an earlier failure). */
  outcomes: Map<string, LedgerEvent>;
  /** Calls whose `tool.requested` is committed: the tool may have run. */
  requested: Set<string>;
  /** The input each requested call's tool was called with (its `tool.requested` args). */
  inputs: Map<string, JsonValue>;
}

/**
 * The records of the tool calls `completed` asked for. Matched through the attempt, not the id
 * alone: some providers reuse tool call ids on every step (call_0...), so an earlier step's
 * result must never stand in for a call still in flight. A call's attempts are the tool
 * requests caused by this completion (a retry keeps that cause), or, for a request recorded
 * without a cause, the ones after it with its id.
 */
export function toolCallRecordsOf(events: LedgerEvent[], completed: LedgerEvent): ToolCallRecords {
  const attempts = new Map<string, string>();
  const records: ToolCallRecords = { outcomes: new Map(), requested: new Set(), inputs: new Map() };
  for (const event of events) {
    if (event.seq <= completed.seq || event.attemptId === undefined) continue;
    if (event.type === "tool.requested") {
      const cause = event.causedByEventId;
      if (cause !== undefined && cause !== completed.eventId) continue;
      const payload = payloadOf(event);
      const toolCallId = String(payload.toolCallId);
      attempts.set(event.attemptId, toolCallId);
      records.requested.add(toolCallId);
      if (payload.args !== undefined) records.inputs.set(toolCallId, payload.args);
      continue;
    }
    const toolCallId = attempts.get(event.attemptId);
    if (toolCallId !== undefined && OUTCOME_TYPES.has(event.type))
      records.outcomes.set(toolCallId, event);
  }
  return records;
}
