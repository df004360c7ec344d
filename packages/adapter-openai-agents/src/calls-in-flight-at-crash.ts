import type { RunToolApprovalItem } from "@openai/agents";
import { approvalCallId } from "./approval-decisions.js";
import { recordedCall } from "./ledger-state.js";
import type { LedgerScope } from "./scope.js";

/**
 * An interruption that is no fresh request for approval: the process was making this call when
 * it died, so it may have had its effect. `attemptId`: its attempt in the ledger, still
 * unresolved (what `agent-ledger inspect` lists and `agent-ledger resolve` decides).
 */
export interface CallInFlightAtCrash {
  item: RunToolApprovalItem;
  attemptId: string;
}

/**
 * The attempt a crash left in flight that `item` asks about, if it asks about one: the ledger
 * holds the call as requested and never ended, and keys a decision on it by that attempt (the
 * SDK asks before it runs a call, so a live request is never recorded yet).
 */
export function inFlightAttemptOf(
  scope: LedgerScope,
  item: RunToolApprovalItem,
): string | undefined {
  const recorded = recordedCall(scope.run, approvalCallId(item));
  return recorded?.status === "requested" ? recorded.attemptId : undefined;
}

/** The interruptions among `items` that are calls in flight at a crash, in their order. */
export function callsInFlightAtCrash(
  scope: LedgerScope,
  items: readonly RunToolApprovalItem[],
): CallInFlightAtCrash[] {
  return items.flatMap((item) => {
    const attemptId = inFlightAttemptOf(scope, item);
    return attemptId === undefined ? [] : [{ item, attemptId }];
  });
}
