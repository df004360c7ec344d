import { type JsonObject, type LedgerEvent, resolveEvents } from "@agent-ledger/core";
import type { RunState, RunToolApprovalItem } from "@openai/agents";
import {
  APPROVAL_EVENT_TYPE,
  recordedAttempt,
  recordedCall,
  recorderOfRun,
} from "./ledger-state.js";
import type { LedgerScope } from "./scope.js";

// biome-ignore lint/suspicious/noExplicitAny: any context
type AnyRunState = RunState<any, any>;

/**
 * The id the SDK keys an approval by: the callId of a function, shell or computer call, else
 * (a hosted MCP approval request) the item's id.
 */
export function approvalCallId(item: RunToolApprovalItem): string {
  const raw = item.rawItem as {
    callId?: string;
    id?: string;
    providerData?: { itemId?: string; id?: string };
  };
  if ("callId" in raw) return raw.callId ?? "";
  return raw.id ?? raw.providerData?.itemId ?? raw.providerData?.id ?? "";
}

function approvalOf(state: AnyRunState, item: RunToolApprovalItem): boolean | undefined {
  return state._context.isToolApproved({
    toolName: item.toolName ?? item.name ?? "",
    callId: approvalCallId(item),
  });
}

// The decision the ledger holds for an interruption: by attempt for a call a crash left
// unresolved, else by callId (`attemptsOnly`: only the decisions on recorded attempts).
export function recordedDecision(
  scope: LedgerScope,
  item: RunToolApprovalItem,
  options: { attemptsOnly?: boolean } = {},
): boolean | undefined {
  const callId = approvalCallId(item);
  const recorded = recordedCall(scope.run, callId);
  if (recorded?.status === "abandoned") return false;
  if (recorded?.status === "requested") return scope.run.decisions.get(recorded.attemptId);
  return options.attemptsOnly ? undefined : scope.run.decisions.get(`call:${callId}`);
}

// Rejects an interruption the ledger holds a "no" for, with the text the model saw when it was
// decided (a re-executed run must send the same requests): the message the person rejected it
// with in the SDK (recorded with the decision), else the SDK's own text; for a call a person
// abandoned outside the SDK (`agent-ledger resolve --abandon`), that person's reason.
export function rejectRecorded(
  state: AnyRunState,
  scope: LedgerScope,
  item: RunToolApprovalItem,
): void {
  const callId = approvalCallId(item);
  const recorded = recordedCall(scope.run, callId);
  const attemptKey =
    recorded?.status === "abandoned" || recorded?.status === "requested"
      ? recorded.attemptId
      : undefined;
  let message: string | undefined;
  if (attemptKey !== undefined && scope.run.decisions.has(attemptKey))
    message = scope.run.rejectionMessages.get(attemptKey);
  else if (recorded?.status === "abandoned") message = recorded.abandonReason;
  else message = scope.run.rejectionMessages.get(`call:${callId}`);
  if (message === undefined) state.reject(item);
  else state.reject(item, { message });
}

// Applies decisions recorded in the ledger to a re-executed run's interruptions; false when a
// person still has to decide one.
export function applyRecordedDecisions(
  state: AnyRunState,
  scope: LedgerScope,
  options: { attemptsOnly?: boolean } = {},
): boolean {
  const interruptions = state.getInterruptions();
  const decisions = interruptions.map((item) => recordedDecision(scope, item, options));
  if (decisions.some((decision) => decision === undefined)) return false;
  interruptions.forEach((item, index) => {
    if (decisions[index]) state.approve(item);
    else rejectRecorded(state, scope, item);
  });
  return true;
}

// Records the decisions a person made on the interruptions of `state`, and retries (approve)
// or abandons (reject) the calls a crash had left unresolved.
export async function recordDecisions(
  scope: LedgerScope,
  state: AnyRunState,
  events: readonly LedgerEvent[],
): Promise<void> {
  const { store, sessionId } = scope.root;
  for (const item of state.getInterruptions()) {
    const approved = approvalOf(state, item);
    if (approved === undefined) continue;
    const callId = approvalCallId(item);
    const recorded = recordedCall(scope.run, callId);
    const unresolved = recorded?.status === "requested" ? recorded : undefined;
    const payload: JsonObject = { callId, toolName: item.name ?? "", approved };
    if (unresolved) payload.attemptId = unresolved.attemptId;
    const key = unresolved ? unresolved.attemptId : `call:${callId}`;
    // What the model is shown for a rejection: a re-executed run must show it the same.
    const message = approved
      ? undefined
      : state._context.getRejectionMessage(item.toolName ?? item.name ?? "", callId);
    if (typeof message === "string") {
      payload.message = message;
      scope.run.rejectionMessages.set(key, message);
    }
    // Recorded before a crash already: do not record it twice.
    if (scope.run.decisions.get(key) !== approved)
      await scope.root.record({ type: APPROVAL_EVENT_TYPE, payload });
    scope.run.decisions.set(key, approved);
    if (!unresolved) continue;
    // Resolved: large arguments are blob references in the stored event, and the retry records
    // the arguments themselves.
    const attempt = recordedAttempt(
      await resolveEvents(
        store,
        events.filter((event) => event.attemptId === unresolved.attemptId),
      ),
      unresolved.attemptId,
    );
    if (!attempt) continue;
    const owner =
      attempt.runId === scope.root.runId
        ? scope.root
        : attempt.runId === scope.current?.runId
          ? scope.current
          : await recorderOfRun(store, sessionId, attempt.runId, events);
    if (approved) {
      scope.run.approvedRetries.set(callId, await owner.retry(attempt));
    } else {
      await owner.abandon(attempt, "rejected by a person after the process died during the call");
      unresolved.status = "abandoned";
    }
  }
}
