import { inspectEvents, type LedgerEvent, madeAgainByItself } from "@agent-ledger/core";

/**
 * The agent calls in flight at a crash that the resume makes again by itself, by attemptId:
 * decided by core's `madeAgainByItself`, as `agent-ledger inspect` decides what it says of them,
 * so the two cannot disagree. Read for an agent used as a tool with the default effect: its
 * request says its effect is that of its child run (`effectInChildRuns`), which says whether it
 * records every call its agent makes (`instrumentAgent`); without that, or without a child run,
 * a plain SDK tool of its agent may have had its effect unseen, and a person is asked. A request
 * recorded without `effectInChildRuns` (before it was written) is asked about too.
 */
export function agentCallsMadeAgain(
  sessionId: string,
  treeEvents: readonly LedgerEvent[],
): Set<string> {
  const inspection = inspectEvents(sessionId, treeEvents);
  const madeAgain = madeAgainByItself(inspection);
  return new Set(
    inspection.unresolved
      .filter((attempt, index) => attempt.effectInChildRuns === true && madeAgain[index] === true)
      .map((attempt) => attempt.attemptId),
  );
}
