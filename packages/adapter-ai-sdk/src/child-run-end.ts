import {
  type Attempt,
  type ReplayedOutcome,
  settleCallsInside,
  type ToolCallEnd,
} from "@agent-ledger/core";
import type { AdapterState } from "./adapter-state.js";
import { isClosingLater } from "./closing-children.js";
import { rebuildError } from "./replayed-errors.js";

// How a wrapped tool call's child run ends: as the call ended (the core's `ToolCallEnd`), once
// the call's own outcome is recorded. Live, once the calls the tool made there have their
// outcomes (`ToolCallContext`); on resume, or when the call is abandoned, whatever the child run
// holds in flight is resolved first (`closeLeftOpen`): its tool call will not run again, so
// nothing else would resolve it.

/** The outcome a call answered from the ledger ended with. */
export function outcomeOfReplayed(replayed: ReplayedOutcome): ToolCallEnd {
  if (replayed.status === "completed") return { failed: false };
  if (replayed.status === "failed") return { failed: true, error: rebuildError(replayed.error) };
  return { abandoned: replayed.reason };
}

/**
 * The child runs of a tool call that will not run again (answered from the ledger on resume, or
 * abandoned), if the ledger holds them open: the core's `settleCallsInside`, the one way the
 * CLI's `resolve --abandon` settles them too. Each call in flight there is abandoned, saying why
 * (a tool call among them has its own child runs settled the same way), then each run is closed
 * as the call ended. A child run whose close waits, in this process, for a call its tool left in
 * flight is left to that close (`isClosingLater`). `state` is the state the call is recorded on;
 * a ledger error stops its run (the next resume does the rest).
 */
export async function closeLeftOpen(
  state: AdapterState,
  attempt: Attempt,
  outcome: ToolCallEnd,
): Promise<void> {
  await state.settle(
    settleCallsInside({
      recorder: state.recorder,
      call: attempt,
      ended: outcome,
      leave: isClosingLater,
    }),
  );
}
