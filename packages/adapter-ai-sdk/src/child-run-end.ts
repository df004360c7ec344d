import {
  type Attempt,
  inspectEvents,
  type LedgerEvent,
  type ReplayedOutcome,
  readWholeRun,
  type SessionRecorder,
} from "@agent-ledger/core";
import { type AdapterState, adapterStateOf } from "./adapter-state.js";
import { isClosingLater } from "./closing-children.js";
import { rebuildError } from "./replayed-errors.js";

// How a wrapped tool call's child run ends: as the call ended, once the call's own outcome is
// recorded. Live, once the calls the tool made there have their outcomes (`ToolCallContext`);
// on resume, or when the call is abandoned, whatever the child run holds in flight is resolved
// first (`closeLeftOpen`): its tool call will not run again, so nothing else would resolve it.

/** How a wrapped tool's call ended, as its outcome was recorded. */
export type ToolCallOutcome =
  | { failed: false }
  | { failed: true; error: unknown }
  | { abandoned: string };

/** The outcome a call answered from the ledger ended with. */
export function outcomeOfReplayed(replayed: ReplayedOutcome): ToolCallOutcome {
  if (replayed.status === "completed") return { failed: false };
  if (replayed.status === "failed") return { failed: true, error: rebuildError(replayed.error) };
  return { abandoned: replayed.reason };
}

/** Closes `child` as its tool call ended: completed, failed with its error, or cancelled. */
export function closeChild(child: SessionRecorder, outcome: ToolCallOutcome): Promise<LedgerEvent> {
  if ("abandoned" in outcome) return child.cancelRun(outcome.abandoned);
  return outcome.failed ? child.failRun(outcome.error) : child.completeRun();
}

/** What the tool call of `attempt` is called in a reason. */
function toolCallName(attempt: Pick<Attempt, "name" | "toolCallId">): string {
  const id = attempt.toolCallId === undefined ? "" : ` (${attempt.toolCallId})`;
  return `tool call ${attempt.name ?? "(unnamed)"}${id}`;
}

/**
 * Why a call left in flight in the child run of a tool call that ended with `outcome` is
 * abandoned: the tool call will not run again, so the call will never get an answer.
 */
function abandonedBecause(call: string, outcome: ToolCallOutcome): string {
  if ("abandoned" in outcome) return `its ${call} was abandoned: ${outcome.abandoned}`;
  return `left in flight by its ${call}, which had ended: its answer was never recorded, and that tool call is not run again`;
}

/**
 * The child run of a tool call that will not run again (answered from the ledger on resume, or
 * abandoned), if the ledger holds it open: each call it holds in flight is abandoned, saying
 * why (a tool call among them has its own child run closed the same way, after), then the run
 * is closed as the call ended. `state` is the state the call is recorded on; a ledger error
 * stops its run (the next resume does the rest).
 */
export async function closeLeftOpen(
  state: AdapterState,
  attempt: Pick<Attempt, "requestedEventId" | "name" | "toolCallId">,
  outcome: ToolCallOutcome,
): Promise<void> {
  await state.settle(closeIfOpen(state, attempt, outcome));
}

async function closeIfOpen(
  state: AdapterState,
  attempt: Pick<Attempt, "requestedEventId" | "name" | "toolCallId">,
  outcome: ToolCallOutcome,
): Promise<void> {
  const open = state.openChildRuns();
  if (open.size === 0) return;
  // Adopts the recorded child run of this call (by its cause), if it made one.
  const child = state.recorder.child({
    actor: state.recorder.actor,
    causedByEventId: attempt.requestedEventId,
  });
  // Its tool's call, in this process, closes it once the calls it left in flight answer.
  if (!open.has(child.runId) || isClosingLater(child)) return;
  const reason = abandonedBecause(toolCallName(attempt), outcome);
  const { sessionId, runId } = child;
  const events = await readWholeRun(child.store, { sessionId, runId });
  // In flight as inspection reports it: requested, with no outcome and no retry.
  for (const call of inspectEvents(sessionId, events).unresolved) {
    await child.abandon(call, reason);
    if (call.kind === "tool")
      await closeIfOpen(
        adapterStateOf(child),
        {
          requestedEventId: call.requestEventId,
          ...(call.name !== undefined ? { name: call.name } : {}),
          ...(call.toolCallId !== undefined ? { toolCallId: call.toolCallId } : {}),
        },
        { abandoned: reason },
      );
  }
  await closeChild(child, outcome);
}
