import { hashJson } from "../events/canonical.js";
import { ReplayDivergenceError, UnresolvedAttemptError } from "../events/errors.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent, ToolEffect } from "../events/types.js";
import { divergenceText, firstDifference } from "../replay/first-difference.js";
import { matched } from "../replay/recorded-attempts.js";
import {
  attemptFromRecorded,
  type RecordedAttempt,
  type ReplayCursor,
  type ReplayMatch,
} from "../replay/replay-cursor.js";
import type { EventStore } from "../store/event-store.js";
import type { Attempt, ReplayedOutcome } from "./attempt.js";
import { whyLeftUnresolved } from "./left-unresolved.js";
import { ABANDON_COMMAND_USE, abandonCommand } from "./resolve-command.js";

/** The recorded outcome of each attempt answered from the ledger, by the object handed out. */
const replayedOutcomes = new WeakMap<Attempt, LedgerEvent>();

/**
 * The outcome the ledger holds for `attempt`, when it is the very object `answerFromLedger`
 * handed out: an outcome recorded for it is answered with this one, nothing written.
 */
export function recordedOutcomeOf(attempt: Attempt): LedgerEvent | undefined {
  return replayedOutcomes.get(attempt);
}

/**
 * A recorded call met again on resume, as the adapter gets it back: the attempt with the
 * outcome the ledger holds (`replayed`). Undefined when it has none (in flight at the crash).
 */
export function answerFromLedger(match: ReplayMatch): Attempt | undefined {
  if (match.status === "unresolved") return undefined;
  const outcome = match.attempt.outcome as LedgerEvent;
  return answeredWith(attemptFromRecorded(match.attempt), outcome, match.status);
}

/**
 * `attempt`, whose outcome the ledger holds (`outcome`, of `status`), as the adapter gets it
 * back: with that outcome as `replayed`, and an outcome recorded for it answered with this one.
 */
export function answeredWith(
  attempt: Attempt,
  outcome: LedgerEvent,
  status: ReplayedOutcome["status"],
): Attempt {
  const payload = (outcome.payload ?? {}) as JsonObject;
  let replayed: ReplayedOutcome;
  if (status === "completed") {
    replayed = {
      status: "completed",
      result: (attempt.kind === "model" ? payload.response : payload.result) ?? null,
      eventId: outcome.eventId,
    };
  } else if (status === "failed") {
    replayed = {
      status: "failed",
      error: (payload.error ?? { name: "Error", message: "failed" }) as never,
      eventId: outcome.eventId,
    };
    if (payload.partial !== undefined) replayed.partial = payload.partial;
  } else {
    replayed = {
      status: "abandoned",
      reason: String(payload.reason ?? "abandoned"),
      eventId: outcome.eventId,
    };
  }
  if (outcome.metadata !== undefined) replayed.metadata = outcome.metadata;
  attempt.replayed = replayed;
  // Not open (the ledger holds its outcome): an outcome for it is refused, but for this very
  // object, the one the adapter got back, which is answered with the recorded one.
  replayedOutcomes.set(attempt, outcome);
  return attempt;
}

/**
 * `unresolved-attempt` for a tool call in flight at the crash (or left without an outcome by
 * its process, `leaveUnresolved`: its message says which where this process knows) that may
 * not run again (not idempotent, not approved): the error carries the attempt, so the adapter
 * can ask a person and then `retry` or `abandon` it. Its message tells whoever reads it after the resume stopped to
 * abandon or approve it and resume: a `retry` there records an attempt that nothing makes. Its
 * shell command names `store`, the run's, where the caller has it (see `abandonCommand`).
 */
export function unresolvedToolCall(
  match: ReplayMatch,
  name: string,
  toolCallId: string | undefined,
  store?: EventStore,
): UnresolvedAttemptError {
  const attempt = attemptFromRecorded(match.attempt);
  const command = abandonCommand(store, attempt);
  const call = `tool call ${name}${toolCallId ? ` (${toolCallId})` : ""}`;
  // The ledger holds a call its process left without an outcome as it holds one a crash cut
  // off: only this process knows it left it so (see `whyLeftUnresolved`).
  const why = whyLeftUnresolved(attempt);
  const what =
    why === undefined
      ? `${call} was in flight when the process died, or was left without an outcome by the process that made it (its caller stopped it while it ran: the ledger does not tell which), and is not declared idempotent: it may or may not have happened`
      : `${call} was left without an outcome by this process, not cut off by a crash: ${why}. It is not declared idempotent, so it is not made again by itself`;
  return new UnresolvedAttemptError(
    `${what}. Check its effect, then decide attempt ${attempt.attemptId}: abandon it (recorder.abandon(error.attempt, reason)), or approve it to be made again (recorder.approve(error.attempt, reason)), then resume; from a shell, ${command} abandons it ${ABANDON_COMMAND_USE}, then resume. (recorder.retry(error.attempt) is for a loop of your own that makes the call at once with the attempt it returns: a retry nothing makes is in flight again.)`,
    {
      attemptId: attempt.attemptId,
      stepId: attempt.stepId,
      toolCallId: attempt.toolCallId ?? null,
      name,
      seq: attempt.seq,
    },
    attempt,
  );
}

/**
 * Whether a tool attempt in flight at the crash may run again on resume: declared idempotent
 * (by the call now, `effect`, or when it was recorded) or approved by a person.
 */
export function mayRunAgain(recorded: RecordedAttempt, effect?: ToolEffect): boolean {
  return effect?.idempotent === true || recorded.effect?.idempotent === true || !!recorded.approved;
}

/**
 * The `unresolved-attempt` a resumed run's tool call `toolCallId` would be refused with, if the
 * ledger holds it in flight at the crash, undecided (not idempotent, approved or abandoned) and
 * not met again yet: what an adapter refuses a model call with whose prompt carries a result
 * for it that its wrapped tool never recorded (the tool ran unwrapped). Looked up, not a scan.
 * `accepts`: only the recorded attempts it accepts count (an adapter whose run holds several
 * conversations, whose models may give the same ids, looks in the prompt's own).
 */
export function undecidedToolCall(
  replay: ReplayCursor,
  toolCallId: string,
  accepts?: (recorded: RecordedAttempt) => boolean,
): UnresolvedAttemptError | undefined {
  for (const recorded of replay.unmatchedTools({ toolCallId }))
    if (recorded.status === "requested" && !mayRunAgain(recorded) && (accepts?.(recorded) ?? true))
      return unresolvedToolCall(matched(recorded), recorded.name ?? "tool", toolCallId);
  return undefined;
}

/**
 * `recorded`, met again by a re-executed loop (an input, a run's end), when `payload` is what
 * it recorded; otherwise the loop is not re-executing the same run: `replay-divergence`.
 */
export function sameAsRecorded(
  recorded: LedgerEvent,
  payload: JsonValue | undefined,
  what: { name: string; built: string },
): LedgerEvent {
  if (hashJson(recorded.payload) === hashJson(payload)) return recorded;
  const difference = firstDifference(recorded.payload, payload);
  throw new ReplayDivergenceError(
    `${what.name} differs from the one recorded at seq ${recorded.seq}${divergenceText(difference, what.built)}`,
    {
      seq: recorded.seq,
      eventId: recorded.eventId,
      ...(difference ? { path: difference.path } : {}),
    },
  );
}
