import type { LedgerEvent } from "../events/types.js";
import {
  type AttemptRecord,
  attemptKey,
  type RunRecord,
  type SessionModel,
} from "./session-model.js";

// A sub-agent's run that a resume picked up again, under a retry of the tool call that ran it.

/**
 * The attempt of the tool call whose attempt `causeKey` ran `run` (an agent used as a tool) under
 * which a resume picked the run up again: the last retry of the call requested before the run's
 * last event. Undefined when the run recorded nothing after the call was made again (a new run
 * for the retry, or none).
 */
export function resumingAttempt(
  model: SessionModel,
  causeKey: string,
  run: RunRecord,
): AttemptRecord | undefined {
  const last = run.events[run.events.length - 1] as LedgerEvent;
  let found: AttemptRecord | undefined;
  const seen = new Set<string>();
  let attempt = model.attempts.get(causeKey);
  while (attempt?.retriedBy !== undefined && !seen.has(attempt.attemptId)) {
    seen.add(attempt.attemptId);
    attempt = model.attempts.get(attemptKey(attempt.runId, attempt.retriedBy));
    if (attempt && attempt.requested.commitCursor < last.commitCursor) found = attempt;
  }
  return found;
}
