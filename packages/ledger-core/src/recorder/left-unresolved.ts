import type { Attempt } from "./attempt.js";

// Why this process left each attempt without an outcome (`SessionRecorder.leaveUnresolved`: its
// caller aborted it while it ran). Nothing of it is written: the ledger holds the call as a crash
// leaves one, so a resume in another process cannot tell the two apart. A resume in this one (a
// chat server that takes a turn sent again after its user pressed stop) can, and its refusal
// says what happened rather than that a process died.

/** The notes kept at most: the oldest goes first (a long-lived server aborts calls for ever). */
const MOST_NOTES = 10_000;

const whyLeft = new Map<string, string>();

const keyOf = (attempt: Pick<Attempt, "sessionId" | "attemptId">) =>
  `${attempt.sessionId}\u0000${attempt.attemptId}`;

/** Notes that this process left `attempt` without an outcome, and why. */
export function noteLeftUnresolved(attempt: Attempt, why: string): void {
  const key = keyOf(attempt);
  whyLeft.delete(key);
  whyLeft.set(key, why);
  if (whyLeft.size > MOST_NOTES) whyLeft.delete(whyLeft.keys().next().value as string);
}

/** Why this process left `attempt` without an outcome, if it did. */
export function whyLeftUnresolved(
  attempt: Pick<Attempt, "sessionId" | "attemptId">,
): string | undefined {
  return whyLeft.get(keyOf(attempt));
}
