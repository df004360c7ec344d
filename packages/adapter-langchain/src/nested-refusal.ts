import {
  type Attempt,
  LedgerError,
  type ReplayedOutcome,
  type SessionRecorder,
  UnresolvedAttemptError,
} from "@agent-ledger/core";
import type { ToolRun } from "./run-tree.js";

/**
 * Why the ledger refused a call made inside another tool's call (a nested call, matched by
 * name and order on resume): `unresolved`, it was in flight at a crash and no person has
 * decided; `completed` / `failed` / `abandoned`, the ledger holds its outcome but a callback
 * cannot hand a nested call its recorded answer, and it is not idempotent; `ledger`, the ledger
 * could not record it (store down, divergence...).
 */
export interface NestedRefusal {
  /** The LedgerError the nested call was refused with. */
  error: LedgerError;
  name: string;
  attemptId: string | undefined;
  status: "unresolved" | ReplayedOutcome["status"] | "ledger";
  /** The person's reason, for an abandoned call. */
  reason?: string;
}

/** What an error thrown while starting a nested call tells of it. */
export function nestedRefusal(error: LedgerError, name: string): NestedRefusal {
  if (!LedgerError.isInstance(error, "unresolved-attempt"))
    return { error, name, attemptId: undefined, status: "ledger" };
  const replayed = error.attempt.replayed;
  const refusal: NestedRefusal = {
    error,
    name,
    attemptId: error.attemptId,
    status: replayed?.status ?? "unresolved",
  };
  if (replayed?.status === "abandoned") refusal.reason = replayed.reason;
  return refusal;
}

/**
 * The refusals met inside each tool call in progress, by the eventId of that call's
 * `tool.requested`. A refusal is no outcome of the call it happened in: that call did not fail,
 * the ledger did not let it go on. So neither the handler nor `ledgerMiddleware` records one
 * for it (see `settleRefused`): a resume runs it again, and meets the nested call again, once
 * a person has decided on it.
 */
export class NestedRefusals {
  readonly #byOuter = new Map<string, NestedRefusal>();

  /** How many refusals it keeps (see `keptBy`). */
  get kept(): number {
    return this.#byOuter.size;
  }

  /** A nested call of the call `outerRequestedEventId` was refused (the first one counts). */
  note(outerRequestedEventId: string, refusal: NestedRefusal): void {
    if (!this.#byOuter.has(outerRequestedEventId))
      this.#byOuter.set(outerRequestedEventId, refusal);
  }

  /**
   * The ledger refused (`error`, any other error passes) the call `name` made inside the tool
   * call `outer`, if there is one and its request is recorded: noted against that call.
   */
  noteInside(outer: ToolRun | undefined, error: unknown, name: string): void {
    if (outer?.requestedEventId !== undefined && LedgerError.isInstance(error))
      this.note(outer.requestedEventId, nestedRefusal(error, name));
  }

  /** The refusal met inside this call, if any, forgotten as the call ends. */
  take(requestedEventId: string): NestedRefusal | undefined {
    const refusal = this.#byOuter.get(requestedEventId);
    this.#byOuter.delete(requestedEventId);
    return refusal;
  }
}

/** The reason an outer call is abandoned with when a call it makes was abandoned. */
export function abandonedWithin(refusal: NestedRefusal): string {
  return `${refusal.name}, called inside this tool call, was abandoned: ${refusal.reason ?? "abandoned"}`;
}

/**
 * Settles a tool call inside which the ledger refused a nested call; returns what the call ends
 * with, or throws the error it must end with. Nothing is recorded as the call's outcome unless
 * a person closed the nested call for good (abandoned): then the call is abandoned with that
 * reason, as the README says an abandoned call ends (the model is told why). Otherwise the call
 * stays unresolved, and the error names the attempt a person must decide on: the nested call
 * if it was in flight at the crash; this call, if a model asked for it (`askedByModel`) and
 * the nested one already has an outcome the callback cannot hand back.
 */
export async function settleRefused(options: {
  recorder: SessionRecorder;
  attempt: Attempt;
  refusal: NestedRefusal;
  /** True for a call a model asked for (not itself made inside a tool). */
  askedByModel: boolean;
}): Promise<{ abandoned: string }> {
  const { recorder, attempt, refusal, askedByModel } = options;
  if (refusal.status === "abandoned") {
    const reason = abandonedWithin(refusal);
    await recorder.abandon(attempt, reason);
    return { abandoned: reason };
  }
  if (!askedByModel || (refusal.status !== "completed" && refusal.status !== "failed"))
    throw refusal.error;
  const callId = attempt.toolCallId !== undefined ? ` (${attempt.toolCallId})` : "";
  throw new UnresolvedAttemptError(
    `tool call ${attempt.name}${callId} did not finish: ${refusal.name}, which it calls, was already ${refusal.status} before the run was resumed and is not idempotent, so it is not run again (a call made inside a tool cannot be answered from the ledger). Decide on attempt ${attempt.attemptId}: abandon it with what happened (the model gets the reason), approve it to run it again with ${refusal.name}, or declare ${refusal.name} idempotent if running it again is safe.`,
    {
      attemptId: attempt.attemptId,
      stepId: attempt.stepId,
      toolCallId: attempt.toolCallId ?? null,
      name: attempt.name ?? null,
      seq: attempt.seq,
      inner: { attemptId: refusal.attemptId ?? null, name: refusal.name, status: refusal.status },
    },
    attempt,
  );
}
