import {
  collectAttempts,
  type EventStore,
  type JsonObject,
  type LedgerEvent,
  resolvePayload,
} from "@agent-ledger/core";

/**
 * The tool calls in flight at a crash that are safe to run again as agent tools (an agent used
 * as a tool): by attemptId. Such a call's child run holds its agent's turns; it is safe when
 * that run shows the agent is recorded call by call: it recorded a model call, and every
 * function call its model completions asked for has a tool attempt there (a ledger tool: run
 * again, it is answered from the ledger or asked about). Not safe: a plain SDK tool of an agent
 * the ledger does not instrument (`instrumentAgent`) was asked for (it may have had its effect,
 * and would have it again unseen), or the child run shows no model call (an agent whose model
 * the ledger does not see, or one that had not started: nothing tells them apart), or there is
 * no child run. A completion whose output cannot be read as a list of items counts as unsafe.
 *
 * Read only for the calls in flight (a resume's rare path).
 */
export async function agentCallsSafeToRerun(
  store: EventStore,
  treeEvents: readonly LedgerEvent[],
): Promise<Set<string>> {
  const byRun = new Map<string, LedgerEvent[]>();
  for (const event of treeEvents) {
    const list = byRun.get(event.runId);
    if (list) list.push(event);
    else byRun.set(event.runId, [event]);
  }
  // The attempt in flight by its request event: a child run names it as its cause.
  const inFlight = new Map<string, string>();
  for (const events of byRun.values())
    for (const attempt of collectAttempts(events))
      if (attempt.kind === "tool" && attempt.status === "requested")
        inFlight.set(attempt.requested.eventId, attempt.attemptId);
  const safe = new Set<string>();
  if (inFlight.size === 0) return safe;
  for (const [runId, events] of byRun) {
    const cause = events.find((event) => event.type === "run.started")?.causedByEventId;
    const attemptId = cause === undefined ? undefined : inFlight.get(cause);
    if (attemptId === undefined) continue;
    if (await recordedCallByCall(store, events)) safe.add(attemptId);
  }
  return safe;
}

async function recordedCallByCall(store: EventStore, events: LedgerEvent[]): Promise<boolean> {
  if (!events.some((event) => event.type === "model.requested")) return false;
  const recorded = new Set<string>();
  for (const attempt of collectAttempts(events))
    if (attempt.kind === "tool" && attempt.toolCallId !== undefined)
      recorded.add(attempt.toolCallId);
  for (const event of events) {
    if (event.type !== "model.completed") continue;
    // The recorder keeps the response under `response` (modelResponseToJson's shape).
    const payload = (await resolvePayload(store, event.payload)) as JsonObject | null;
    const output = (payload?.response as JsonObject | null | undefined)?.output;
    if (!Array.isArray(output)) return false;
    for (const item of output) {
      const call = item as { type?: unknown; callId?: unknown } | null;
      if (call?.type === "function_call" && typeof call.callId === "string")
        if (!recorded.has(call.callId)) return false;
    }
  }
  return true;
}
