import {
  type Attempt,
  collectAttempts,
  type JsonObject,
  type LedgerEvent,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { LedgerRunState, RecordedToolCall } from "./scope.js";

/** Type of the custom event recording a person's decision on an approval interruption. */
export const APPROVAL_EVENT_TYPE = "x.openai-agents.approval";

const CALL_TYPES = new Set([
  "model.requested",
  "model.completed",
  "model.failed",
  "tool.requested",
  "tool.completed",
  "tool.failed",
  "attempt.abandoned",
]);

export function isCallEvent(event: LedgerEvent): boolean {
  return CALL_TYPES.has(event.type);
}

/** The run and every run below it (handoffs, agents as tools), from run.started parentRunId. */
export function runTree(events: readonly LedgerEvent[], rootRunId: string): Set<string> {
  const tree = new Set([rootRunId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const event of events) {
      if (event.type !== "run.started" || tree.has(event.runId)) continue;
      if (event.parentRunId !== undefined && tree.has(event.parentRunId)) {
        tree.add(event.runId);
        grew = true;
      }
    }
  }
  return tree;
}

/** What the ledger knows of every tool call (latest attempt per callId) and every decision. */
export function loadRunState(events: readonly LedgerEvent[]): LedgerRunState {
  const state: LedgerRunState = {
    recordedToolCalls: new Map<string, RecordedToolCall>(),
    decisions: new Map(),
    approvedRetries: new Map(),
  };
  const byRun = new Map<string, LedgerEvent[]>();
  for (const event of events) {
    const list = byRun.get(event.runId) ?? [];
    list.push(event);
    byRun.set(event.runId, list);
    if (event.type === APPROVAL_EVENT_TYPE) {
      const payload = event.payload as JsonObject;
      const key =
        typeof payload.attemptId === "string"
          ? payload.attemptId
          : `call:${String(payload.callId)}`;
      state.decisions.set(key, payload.approved === true);
    }
  }
  for (const runEvents of byRun.values()) {
    for (const attempt of collectAttempts(runEvents)) {
      if (attempt.kind !== "tool" || attempt.toolCallId === undefined) continue;
      // Attempts come in request order: the last one of a callId is its current state.
      state.recordedToolCalls.set(attempt.toolCallId, {
        attemptId: attempt.attemptId,
        status: attempt.status,
      });
    }
  }
  return state;
}

/** The Attempt of a recorded tool attempt (to retry or abandon it after a person decided). */
export function recordedAttempt(
  events: readonly LedgerEvent[],
  attemptId: string,
): Attempt | undefined {
  for (const recorded of collectAttempts(events)) {
    if (recorded.attemptId !== attemptId) continue;
    const payload = recorded.requested.payload as JsonObject;
    const attempt: Attempt = {
      kind: recorded.kind,
      sessionId: recorded.requested.sessionId,
      runId: recorded.requested.runId,
      stepId: recorded.stepId,
      attemptId: recorded.attemptId,
      requestedEventId: recorded.requested.eventId,
      seq: recorded.requested.seq,
      request: (recorded.kind === "model" ? payload.request : payload.args) ?? null,
      requestHash: recorded.requestHash,
    };
    if (recorded.retryOf !== undefined) attempt.retryOf = recorded.retryOf;
    if (recorded.toolCallId !== undefined) attempt.toolCallId = recorded.toolCallId;
    if (recorded.name !== undefined) attempt.name = recorded.name;
    if (recorded.effect !== undefined) attempt.effect = recorded.effect;
    return attempt;
  }
  return undefined;
}

/**
 * Moves a resumed recorder's replay cursor past every recorded call: used when a run goes on
 * from a RunState checkpoint rather than re-executing from its input, so what comes next is
 * live. (Core has no "resume from seq" option yet; this uses the public cursor.)
 */
export function skipRecordedCalls(
  recorder: SessionRecorder,
  runEvents: readonly LedgerEvent[],
): void {
  const cursor = recorder.replay;
  if (!cursor) return;
  const attempts = collectAttempts(runEvents);
  const retried = new Set(attempts.map((attempt) => attempt.retryOf).filter(Boolean));
  for (const attempt of attempts) {
    if (retried.has(attempt.attemptId) && attempt.status === "requested") continue;
    if (attempt.kind === "model") cursor.takeModel(attempt.requestHash);
    else
      cursor.takeTool({
        toolCallId: attempt.toolCallId,
        name: attempt.name ?? "",
        requestHash: attempt.requestHash,
      });
  }
  while (cursor.takeInput()) {
    // consume recorded inputs too
  }
}
