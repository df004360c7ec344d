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
// toolCallId and tool name, that it came first in its run, and that no turn in between asked
// for a call of that id and tool (`askingRun`). A restore must see it, or a call that may have
// had its effect (a refund) is offered for approval again and made twice; and must not see
// another turn's, or a call that never ran reads as done.

/** A call of the app's that a completion asked for. */
export interface AskedCall {
  toolCallId: string;
  toolName: string;
}

/** A language model call: embedding calls are not turns of the conversation. */
export const isModelRequest = (event: LedgerEvent): boolean =>
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
 * The run whose conversation the run of `opening` (an approved call it opened with)
 * continues: the latest run, before it, whose last model call asked for that call (a call of
 * the app's, not the provider's). The one rule that ties an approved call to the turn that
 * asked, whichever of the two is restored: providers reuse toolCallIds from turn to turn, so a
 * later turn (of the same chat, or another chat in the session) that asked for a call with the
 * same id and tool comes between, and the call is its own, not the earlier turn's. `session`:
 * the session's events as stored. The completions it reads are resolved first, one at a time
 * from the latest: a large content (many parallel calls, reasoning) is kept in a blob.
 */
async function askingRun(
  store: EventStore,
  session: LedgerEvent[],
  opening: LedgerEvent,
): Promise<string | undefined> {
  const call = {
    toolCallId: String(payloadOf(opening).toolCallId),
    toolName: String(payloadOf(opening).name),
  };
  const before = session.filter(
    (event) => event.commitCursor < opening.commitCursor && event.runId !== opening.runId,
  );
  // The last model call of each run.
  const lastCall = new Map<string, string | undefined>();
  for (const event of before) if (isModelRequest(event)) lastCall.set(event.runId, event.attemptId);
  for (let index = before.length - 1; index >= 0; index--) {
    const event = before[index] as LedgerEvent;
    if (event.type !== "model.completed" || lastCall.get(event.runId) !== event.attemptId) continue;
    const [completion] = await resolveEvents(store, [event]);
    if (completion !== undefined && completionAsks(completion, call)) return event.runId;
  }
  return undefined;
}

/**
 * Adds to `records` (the run's own, of the completion `completed`, the last of its run) the
 * calls of `calls` that a later run of the session opened with, where that run continues this
 * one (`askingRun`): requested, with the input they ran with, and their outcome if one is
 * recorded (resolved unless `resolve` is false). The first such run is the turn that ran the
 * approval; a later one reusing the id is not looked at. `session`: the session's events as
 * stored, if the restore has read them already (`runContinued`); else they are read here.
 */
export async function addApprovedCallRecords(
  store: EventStore,
  completed: LedgerEvent,
  calls: AskedCall[],
  records: ToolCallRecords,
  options: { resolve: boolean; session?: LedgerEvent[] | undefined },
): Promise<void> {
  if (calls.length === 0) return;
  const { resolve } = options;
  const session = options.session ?? (await readWholeSession(store, completed.sessionId));
  // Later runs' events. Opening requests are told from the whole session: a run that made a
  // model call before `completed` did not open with what it asks after it.
  const after = (event: LedgerEvent) =>
    event.commitCursor > completed.commitCursor && event.runId !== completed.runId;
  const later = session.filter(after);
  const opening = openingRequests(session).filter(after);
  for (const call of calls) {
    let first: LedgerEvent | undefined;
    for (const request of opening) {
      if (!asks(request, call)) continue;
      if ((await askingRun(store, session, request)) !== completed.runId) continue;
      first = request;
      break;
    }
    if (first === undefined) continue;
    const ran = first;
    const attempts = new Set(
      opening
        .filter((request) => request.runId === ran.runId && asks(request, call))
        .map((request) => request.attemptId),
    );
    const outcome = later.findLast(
      (event) =>
        event.runId === ran.runId && OUTCOME_TYPES.has(event.type) && attempts.has(event.attemptId),
    );
    // Read as the run's own events are: large content in place of its blob reference.
    const found = outcome === undefined ? [ran] : [ran, outcome];
    const [request, ended] = resolve ? await resolveEvents(store, found) : found;
    records.requested.add(call.toolCallId);
    const args = request && payloadOf(request).args;
    if (args !== undefined) records.inputs.set(call.toolCallId, args);
    if (ended !== undefined) records.outcomes.set(call.toolCallId, ended);
  }
}

/**
 * For a run that made no model call but opened with approved calls: the run of the turn that
 * asked for them, whose conversation it continues (`askingRun` of the first of them), and the
 * session's events as stored, read to find it: the restore of that run takes its events from
 * them, and its approved calls' records too (`addApprovedCallRecords`), without reading again.
 */
export async function runContinued(
  store: EventStore,
  events: LedgerEvent[],
): Promise<{ runId: string; session: LedgerEvent[] } | undefined> {
  const [first] = openingRequests(events);
  if (first === undefined) return undefined;
  const session = await readWholeSession(store, first.sessionId);
  const runId = await askingRun(store, session, first);
  return runId === undefined ? undefined : { runId, session };
}
