import type { RunToolApprovalItem } from "@openai/agents";
import { approvalCallId, approvalOf } from "./approval-decisions.js";
import { recordedCall } from "./ledger-state.js";
import type { AnyRunState } from "./run-ends.js";
import type { LedgerScope } from "./scope.js";

// Whether a result of the same agent's on `state` answers the call id of function call `item`.
// Going on from an interruption, @openai/agents 0.14.3 runs an approved function call only if
// none does (resolveInterruptedTurn's completed call ids): with a provider that reuses call ids
// (call_0 on every turn), a result of an earlier turn does, and the call is never made.
function answeredEarlier(state: AnyRunState, item: RunToolApprovalItem): boolean {
  const raw = item.rawItem as { type?: unknown; callId?: unknown };
  if (raw.type !== "function_call" || typeof raw.callId !== "string") return false;
  return state._generatedItems.some((generated) => {
    const result = generated.rawItem as { type?: unknown; callId?: unknown } | undefined;
    return (
      result?.type === "function_call_result" &&
      result.callId === raw.callId &&
      "agent" in generated &&
      generated.agent === item.agent
    );
  });
}

/**
 * The calls a crash left in flight that a person approved making again (on `state`, else in the
 * ledger) and that the SDK would skip going on from `state` (see `answeredEarlier`). The run is
 * then re-executed from its input instead, where each runs as its retry (see `ledgerTool`).
 */
export function skippedApprovals(state: AnyRunState, scope: LedgerScope): RunToolApprovalItem[] {
  return state.getInterruptions().filter((item) => {
    const recorded = recordedCall(scope.run, approvalCallId(item));
    if (recorded?.status !== "requested") return false;
    const approved = approvalOf(state, item) ?? scope.run.decisions.get(recorded.attemptId);
    return approved === true && answeredEarlier(state, item);
  });
}
