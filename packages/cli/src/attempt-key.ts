import type { AttemptView } from "@agent-ledger/core";

/**
 * An attempt's key in the CLI's maps: a fork copies attemptIds into another run, so an attempt is
 * named by its run and its id. Its own file, so that paused-runs.ts (which next-steps.ts imports)
 * keys its map with it too rather than writing the format out again.
 */
export function attemptKey(attempt: Pick<AttemptView, "runId" | "attemptId">): string {
  return `${attempt.runId}\n${attempt.attemptId}`;
}
