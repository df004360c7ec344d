import {
  EFFECT_IN_CHILD_RUNS_FIELD,
  type JsonObject,
  type LedgerEvent,
  resolveEvents,
  settleCallsInside,
} from "@agent-ledger/core";
import type { RunState, RunToolApprovalItem } from "@openai/agents";
import {
  APPROVAL_EVENT_TYPE,
  askedInReplay,
  recordedAttempt,
  recordedCall,
  recorderOfRun,
} from "./ledger-state.js";
import type { LedgerScope, RecordedToolCall } from "./scope.js";

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

/** The decision made on `item` on `state` (true, false), or undefined. */
export function approvalOf(state: AnyRunState, item: RunToolApprovalItem): boolean | undefined {
  return state._context.isToolApproved({
    toolName: item.toolName ?? item.name ?? "",
    callId: approvalCallId(item),
  });
}

// Arguments the SDK cannot show an approval policy (not JSON, or not a JSON object): with a
// dynamic policy it asks for approval without calling the policy.
function uninspectableArguments(item: RunToolApprovalItem): boolean {
  const raw = item.rawItem as { type?: string; arguments?: unknown };
  if (raw.type !== "function_call" || typeof raw.arguments !== "string") return false;
  try {
    const args: unknown = JSON.parse(raw.arguments);
    return typeof args !== "object" || args === null || Array.isArray(args);
  } catch {
    return true;
  }
}

// A call id no provider sends: what the SDK answers for it is the decision made for every call
// of a tool (`alwaysApprove` / `alwaysReject`), which it keeps per tool, not per call.
const ANY_OTHER_CALL = "\u0000agent-ledger: any other call";

/** The decision made for good on the tool of `item` on `state` (true, false), or undefined. */
function decisionForGood(state: AnyRunState, item: RunToolApprovalItem): boolean | undefined {
  return state._context.isToolApproved({
    toolName: item.toolName ?? item.name ?? "",
    callId: ANY_OTHER_CALL,
  });
}

/** A decision as the ledger holds it; `message`: the text a rejection showed the model. */
interface RecordedDecision {
  approved: boolean;
  message?: string | undefined;
}

// The decision a person made on an interruption, as the ledger holds it: by attempt for a call a
// crash left unresolved, else by callId (`attemptsOnly`: only the decisions on recorded attempts).
function recordedDecision(
  scope: LedgerScope,
  item: RunToolApprovalItem,
  options: { attemptsOnly?: boolean },
): RecordedDecision | undefined {
  const callId = approvalCallId(item);
  const recorded = recordedCall(scope.run, callId);
  if (recorded?.status === "abandoned") return { approved: false };
  if (recorded?.status === "requested") return decisionOf(scope.run, recorded.attemptId);
  return options.attemptsOnly ? undefined : decisionOf(scope.run, `call:${callId}`);
}

// The decision a person made for every call of the tool of `item`, which stands for a decision
// on the call itself, except on a call a crash left in flight: that one may have run, so a
// decision for good made before does not let it run again unasked.
function permanentDecision(
  scope: LedgerScope,
  item: RunToolApprovalItem,
): RecordedDecision | undefined {
  if (recordedCall(scope.run, approvalCallId(item))?.status === "requested") return undefined;
  return scope.run.permanentDecisions.get(item.name ?? "");
}

function decisionOf(run: LedgerScope["run"], key: string): RecordedDecision | undefined {
  const approved = run.decisions.get(key);
  return approved === undefined ? undefined : { approved };
}

// A call of a replayed turn that the SDK asks about, though the recorded run went past it
// without a person (else a decision would be recorded), and the ledger answers it:
// - its arguments are not JSON, and it is asked about only because the ledger's approval
//   function stood in for the tool's own (another call of the turn is in the ledger). Approving
//   it gives what it got then: the SDK tells the model the arguments are invalid (or, for JSON
//   that is not an object, runs the call, answered from the ledger);
// - the ledger holds it as run (completed or failed): something let it through then (the tool's
//   policy at the time, or a decision for good on an earlier call of a ledger written before
//   such decisions were recorded as such). Its outcome is replayed, as the rest of the turn.
//   Asking a person would have them approve a call that ran, and, were the run to go on from
//   that interruption's checkpoint, run it a second time.
function approvedByReplay(scope: LedgerScope, item: RunToolApprovalItem): boolean {
  const callId = approvalCallId(item);
  if (!askedInReplay(scope.run, callId)) return false;
  const status = recordedCall(scope.run, callId)?.status;
  return uninspectableArguments(item) || status === "completed" || status === "failed";
}

// Rejects an interruption the ledger holds a "no" for, with the text the model saw when it was
// decided (a re-executed run must send the same requests): the message the person rejected it
// with in the SDK (recorded with the decision), else the SDK's own text; for a call a person
// abandoned outside the SDK (`agent-ledger resolve --abandon`), that person's reason.
function rejectRecorded(
  state: AnyRunState,
  scope: LedgerScope,
  item: RunToolApprovalItem,
  options: { message?: string | undefined } = {},
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
  else message = scope.run.rejectionMessages.get(`call:${callId}`) ?? options.message;
  if (message === undefined) state.reject(item);
  else state.reject(item, { message });
}

// Applies the decisions recorded in the ledger to a re-executed run's interruptions, each one
// the ledger holds a decision for, even when a person still has to decide another (that person
// is then asked only about the rest, and a call they rejected stays rejected). False when a
// person still has to decide one.
export function applyRecordedDecisions(
  state: AnyRunState,
  scope: LedgerScope,
  options: { attemptsOnly?: boolean } = {},
): boolean {
  let undecided = false;
  for (const item of state.getInterruptions()) {
    const decision = recordedDecision(scope, item, options);
    if (decision?.approved) state.approve(item);
    else if (decision) rejectRecorded(state, scope, item);
    else if (approvedByReplay(scope, item)) {
      state.approve(item);
      scope.run.replayApprovals.add(approvalCallId(item));
    } else {
      // Applied call by call, not for good on `state`: the SDK would then run a later call of
      // the tool that a crash left in flight without asking anyone.
      const forGood = permanentDecision(scope, item);
      if (forGood?.approved) state.approve(item);
      else if (forGood) rejectRecorded(state, scope, item, { message: forGood.message });
      else undecided = true;
    }
  }
  return !undecided;
}

/** The interruptions nobody has decided yet on `state`: what a person is asked about. */
export function undecidedInterruptions(
  state: AnyRunState,
  interruptions: readonly RunToolApprovalItem[],
): RunToolApprovalItem[] {
  return interruptions.filter((item) => approvalOf(state, item) === undefined);
}

// Records the decisions a person made on the interruptions of `state`, all in one append or
// none, and then retries (approve) or abandons (reject) the calls a crash had left unresolved.
// An approval the ledger's replay rule gave is not a person's decision: it is not recorded (a
// person who turned it into a rejection is).
export async function recordDecisions(
  scope: LedgerScope,
  state: AnyRunState,
  events: readonly LedgerEvent[],
): Promise<void> {
  const { payloads, unresolved } = newDecisions(scope, state);
  // All in one append or none (`recordAll`): the first decision ends the run's pause for
  // `agent-ledger inspect`, so a crash between two appends, or one decision refused while the
  // others were written (a redact function that throws for its payload), would leave it saying
  // no call waits on a person while one still does. Concurrent `record` calls were committed
  // together only once each was prepared: a refused payload did not stop the others.
  await scope.root.recordAll({
    events: payloads.map((payload) => ({ type: APPROVAL_EVENT_TYPE, payload })),
  });
  for (const decided of unresolved) await settleUnresolved(scope, decided, events);
}

/** A decision on a call a crash left unresolved: its attempt is retried or abandoned. */
interface UnresolvedDecision {
  callId: string;
  /** The call as the ledger holds it (its attempt in flight). */
  call: RecordedToolCall;
  approved: boolean;
  message: string | undefined;
}

// The decisions made on the interruptions of `state` that the ledger does not hold yet (their
// payloads), noted in `scope` as recorded, and those on calls a crash left unresolved.
function newDecisions(
  scope: LedgerScope,
  state: AnyRunState,
): { payloads: JsonObject[]; unresolved: UnresolvedDecision[] } {
  const payloads: JsonObject[] = [];
  const unresolved: UnresolvedDecision[] = [];
  for (const item of state.getInterruptions()) {
    const approved = approvalOf(state, item);
    if (approved === undefined) continue;
    const callId = approvalCallId(item);
    if (approved && scope.run.replayApprovals.has(callId)) continue;
    const recorded = recordedCall(scope.run, callId);
    const inFlight = recorded?.status === "requested" ? recorded : undefined;
    const payload: JsonObject = { callId, toolName: item.name ?? "", approved };
    if (inFlight) payload.attemptId = inFlight.attemptId;
    const key = inFlight ? inFlight.attemptId : `call:${callId}`;
    const always = decisionForGood(state, item) === approved;
    if (always) payload.always = true;
    // What the model is shown for a rejection: a re-executed run must show it the same.
    const message = approved
      ? undefined
      : state._context.getRejectionMessage(item.toolName ?? item.name ?? "", callId);
    if (typeof message === "string") {
      payload.message = message;
      scope.run.rejectionMessages.set(key, message);
    }
    // Recorded before a crash already: do not record it twice.
    const toolName = item.name ?? "";
    const forGood = scope.run.permanentDecisions.get(toolName);
    if (
      scope.run.decisions.get(key) !== approved ||
      (always && (forGood?.approved !== approved || forGood.message !== message))
    )
      payloads.push(payload);
    scope.run.decisions.set(key, approved);
    if (always)
      scope.run.permanentDecisions.set(toolName, {
        approved,
        ...(typeof message === "string" ? { message } : {}),
      });
    if (inFlight)
      unresolved.push({
        callId,
        call: inFlight,
        approved,
        message: typeof message === "string" ? message : undefined,
      });
  }
  return { payloads, unresolved };
}

// Retries (approved) or abandons (rejected) the attempt a crash left unresolved that a person
// decided on.
async function settleUnresolved(
  scope: LedgerScope,
  { callId, call, approved, message }: UnresolvedDecision,
  events: readonly LedgerEvent[],
): Promise<void> {
  const { store, sessionId } = scope.root;
  // Resolved: large arguments are blob references in the stored event, and the retry records
  // the arguments themselves.
  const attemptEvents = events.filter((event) => event.attemptId === call.attemptId);
  const attempt = recordedAttempt(await resolveEvents(store, attemptEvents), call.attemptId);
  if (!attempt) return;
  // An agent tool's retry says, as its request did, that its effect is that of its child run.
  const request = attemptEvents.find(
    (event) => event.type === "tool.requested" && event.runId === attempt.runId,
  );
  const metadata =
    request?.metadata?.[EFFECT_IN_CHILD_RUNS_FIELD] === true
      ? { metadata: { [EFFECT_IN_CHILD_RUNS_FIELD]: true } }
      : {};
  const ownerOf = async () =>
    attempt.runId === scope.root.runId
      ? scope.root
      : attempt.runId === scope.current?.runId
        ? scope.current
        : await recorderOfRun(store, sessionId, attempt.runId, events, scope.run.redact);
  if (approved) {
    // Recorded when the tool runs, by the recorder it runs on (the attempt's run): a re-run the
    // SDK does not make must not stay in flight.
    scope.run.approvedRetries.set(callId, {
      attemptId: attempt.attemptId,
      retry: async (recorder) =>
        (recorder.runId === attempt.runId ? recorder : await ownerOf()).retry(attempt, metadata),
    });
    return;
  }
  const owner = await ownerOf();
  // The person's message, when they gave one, is what they found (and what the model is told).
  const reason =
    message !== undefined && message !== ""
      ? message
      : "rejected by a person after the process died during the call";
  await owner.abandon(attempt, reason);
  call.status = "abandoned";
  // An agent tool call's agent will not run again: what it left in flight is settled now, as
  // `agent-ledger resolve --abandon` settles it.
  await settleCallsInside({ recorder: owner, call: attempt, ended: { abandoned: reason } });
}
