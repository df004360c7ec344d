import {
  type EventStore,
  isEmbeddingsRequest,
  type JsonObject,
  type LedgerEvent,
  readWholeSession,
  resolveEvents,
} from "@agent-ledger/core";
import { OUTCOME_TYPES, payloadOf, type ToolCallRecords } from "./tool-call-records.js";

// A call a person approved runs in the next turn, a run of its own: the SDK runs it before that
// turn's first model call. Its `tool.requested` names no completion as its cause (the turn has
// made none), and nothing in it names the turn that asked: what ties the two is the call's
// toolCallId and tool name, and that it came first in its run. A restore must see it, or a call
// that may have had its effect (a refund) is offered for approval again and made twice.

/** A call of the app's that a completion asked for. */
export interface AskedCall {
  toolCallId: string;
  toolName: string;
}

const isModelRequest = (event: LedgerEvent): boolean =>
  event.type === "model.requested" && !isEmbeddingsRequest(payloadOf(event).request);

/**
 * The tool requests that opened their run: recorded without a cause, before the run's first
 * model call. Those are the approved calls the SDK ran as a turn began (and their retries).
 */
function openingRequests(events: LedgerEvent[]): LedgerEvent[] {
  const begun = new Set<string>();
  const opening: LedgerEvent[] = [];
  for (const event of events) {
    if (isModelRequest(event)) begun.add(event.runId);
    else if (
      event.type === "tool.requested" &&
      event.causedByEventId === undefined &&
      event.attemptId !== undefined &&
      !begun.has(event.runId)
    )
      opening.push(event);
  }
  return opening;
}

const asks = (request: LedgerEvent, call: AskedCall): boolean => {
  const payload = payloadOf(request);
  return payload.toolCallId === call.toolCallId && payload.name === call.toolName;
};

/** Whether the model completion `completion` (resolved) asked the app to run `call`. */
function completionAsks(completion: LedgerEvent, call: AskedCall): boolean {
  const response = payloadOf(completion).response as JsonObject | undefined;
  const content = response?.content ?? [];
  return (
    Array.isArray(content) &&
    (content as JsonObject[]).some(
      (part) =>
        part.type === "tool-call" &&
        part.providerExecuted !== true &&
        part.toolCallId === call.toolCallId &&
        part.toolName === call.toolName,
    )
  );
}

/**
 * Adds to `records` (the run's own, of the completion `completed`) the calls of `calls` that a
 * later run of the session opened with: requested, with the input they ran with, and their
 * outcome if one is recorded (resolved unless `resolve` is false). The first such run is the
 * turn that ran the approval; a later one reusing the id is not looked at.
 */
export async function addApprovedCallRecords(
  store: EventStore,
  completed: LedgerEvent,
  calls: AskedCall[],
  records: ToolCallRecords,
  resolve: boolean,
): Promise<void> {
  if (calls.length === 0) return;
  const later = (
    await readWholeSession(store, completed.sessionId, undefined, completed.commitCursor)
  ).filter((event) => event.runId !== completed.runId);
  const opening = openingRequests(later);
  for (const call of calls) {
    const first = opening.find((request) => asks(request, call));
    if (first === undefined) continue;
    const attempts = new Set(
      opening
        .filter((request) => request.runId === first.runId && asks(request, call))
        .map((request) => request.attemptId),
    );
    const outcome = later.findLast(
      (event) =>
        event.runId === first.runId &&
        OUTCOME_TYPES.has(event.type) &&
        attempts.has(event.attemptId),
    );
    // Read as the run's own events are: large content in place of its blob reference.
    const found = outcome === undefined ? [first] : [first, outcome];
    const [request, ended] = resolve ? await resolveEvents(store, found) : found;
    records.requested.add(call.toolCallId);
    const args = request && payloadOf(request).args;
    if (args !== undefined) records.inputs.set(call.toolCallId, args);
    if (ended !== undefined) records.outcomes.set(call.toolCallId, ended);
  }
}

/**
 * For a run that made no model call but opened with approved calls: the run of the turn that
 * asked for them, whose conversation it continues. That is the latest run, before the first of
 * them, whose last model call asked for it (a call of the app's, not the provider's).
 */
export async function runContinued(
  store: EventStore,
  events: LedgerEvent[],
): Promise<string | undefined> {
  const [first] = openingRequests(events);
  if (first === undefined) return undefined;
  const call = {
    toolCallId: String(payloadOf(first).toolCallId),
    toolName: String(payloadOf(first).name),
  };
  const before = (await readWholeSession(store, first.sessionId)).filter(
    (event) => event.commitCursor < first.commitCursor && event.runId !== first.runId,
  );
  // The last model call of each run.
  const lastCall = new Map<string, string | undefined>();
  for (const event of before) if (isModelRequest(event)) lastCall.set(event.runId, event.attemptId);
  // From the latest: the completions read are resolved first, one at a time (a large content,
  // many parallel calls or reasoning, is kept in a blob).
  for (let index = before.length - 1; index >= 0; index--) {
    const event = before[index] as LedgerEvent;
    if (event.type !== "model.completed" || lastCall.get(event.runId) !== event.attemptId) continue;
    const [completion] = await resolveEvents(store, [event]);
    if (completion !== undefined && completionAsks(completion, call)) return event.runId;
  }
  return undefined;
}
