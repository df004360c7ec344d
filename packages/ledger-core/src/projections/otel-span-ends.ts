import type { LedgerEvent } from "../events/types.js";
import {
  type AttemptRecord,
  attemptKey,
  type RunRecord,
  type SessionModel,
} from "./session-model.js";

/**
 * When the span of a run that a tool call ran (an agent used as a tool) ends, when the call
 * ended before the run's end was recorded: with the call, since the run's work was over when the
 * call answered (an adapter records the call's outcome first and closes the run after it, or
 * a crash in between leaves the run open). Else at the run's last event before its end, for a
 * run that went on recording after the call ended (a call that timed out while its agent ran on).
 */
export function endInsideTool(run: RunRecord, toolEnd: Date): Date {
  for (let index = run.events.length - 1; index >= 0; index--) {
    const event = run.events[index] as LedgerEvent;
    if (event === run.terminal) continue;
    const at = new Date(event.recordedAt);
    return at > toolEnd ? at : toolEnd;
  }
  return toolEnd;
}

/**
 * When an attempt's span ends: at its outcome; for one its process never answered (in flight
 * at a crash, then retried by a resume or abandoned by a person), at that process's last sign
 * of life: the last event, of the call's run and of the runs a tool call ran inside it (a
 * sub-agent's calls), before the first thing written there after the crash (a person's
 * approval or abandon, or the first retry of any call left in flight then, not this call's
 * own: with calls in flight together, the resume retries them one after the other). Not the
 * resume's time, nor the person's: minutes later, and no latency of the call. Undefined for one
 * still without any: the session's end.
 */
export function attemptEnd(
  model: SessionModel,
  attempt: AttemptRecord,
  run: RunRecord,
): Date | undefined {
  if (settlingEvent(model, attempt) === undefined)
    return attempt.outcome ? new Date(attempt.outcome.recordedAt) : undefined;
  const from = attempt.requested.commitCursor;
  const runs = [run, ...runsInside(run, attempt)];
  let after = Number.POSITIVE_INFINITY;
  for (const each of runs)
    for (const cursor of afterCrash(model, each))
      if (cursor > from && cursor < after) after = cursor;
  let last = attempt.requested;
  for (const each of runs) {
    const before = lastEventBefore(each.events, after);
    if (before !== undefined && before.commitCursor > last.commitCursor) last = before;
  }
  return new Date(last.recordedAt);
}

/** The runs a tool attempt ran (its sub-agents), and the runs under them. */
function runsInside(run: RunRecord, attempt: AttemptRecord): RunRecord[] {
  const found: RunRecord[] = [];
  const waiting = run.children.filter(
    (child) => child.causedByEventId === attempt.requested.eventId,
  );
  for (let next = waiting.pop(); next !== undefined; next = waiting.pop()) {
    found.push(next);
    waiting.push(...next.children);
  }
  return found;
}

/**
 * The commit cursors of what is written in `run` only after a crash: a retry of a call its
 * process never answered, a person's abandon of one, an approval to make one again.
 */
function afterCrash(model: SessionModel, run: RunRecord): number[] {
  const cursors: number[] = [];
  for (const other of run.attempts) {
    const cursor = settlingEvent(model, other)?.commitCursor;
    if (cursor !== undefined) cursors.push(cursor);
  }
  for (const event of run.events)
    if (event.type === "attempt.approved") cursors.push(event.commitCursor);
  return cursors;
}

/**
 * The event that settled an attempt its process never answered: its retry's request, or a
 * person's abandon (`resolve --abandon`, decided after the fact); undefined for any other (an
 * outcome of its own, an abandon by the agent itself at that moment, or none yet).
 */
function settlingEvent(model: SessionModel, attempt: AttemptRecord): LedgerEvent | undefined {
  if (attempt.status === "abandoned")
    return attempt.outcome?.actor?.type === "human" ? attempt.outcome : undefined;
  if (attempt.outcome || attempt.retriedBy === undefined) return undefined;
  return model.attempts.get(attemptKey(attempt.runId, attempt.retriedBy))?.requested;
}

/** The last of `events` (in commit order) committed before `cursor`. */
function lastEventBefore(events: readonly LedgerEvent[], cursor: number): LedgerEvent | undefined {
  let low = 0;
  let high = events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((events[middle] as LedgerEvent).commitCursor < cursor) low = middle + 1;
    else high = middle;
  }
  return events[low - 1];
}
