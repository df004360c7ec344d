import { assertOptions } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import { uuidv7 } from "../events/ids.js";
import type { JsonObject } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import { attemptFromRecorded } from "../replay/replay-cursor.js";
import type { Attempt } from "./attempt.js";
import {
  abandonAttempt,
  DECISION_OPTIONS,
  type DecisionOptions,
  decision,
} from "./call-outcomes.js";
import {
  adoptCriteria,
  adoptUnsure,
  askedToolCall,
  BEFORE_TOOL_CALL,
  type BeforeToolCallOptions,
  matchToolCall,
  toolRequest,
} from "./call-requests.js";
import { commitAllCompacted } from "./commit-event.js";
import { atStep, preparedRequest } from "./commit-request.js";
import type { RecorderState } from "./recorder-state.js";
import { answeredWith, answerFromLedger } from "./replayed-calls.js";
import { inTurn } from "./turns.js";
import { declined } from "./unsure-declines.js";

// A tool call a person or policy declined before it started (an approval request answered
// "no") never runs, but the ledger must hold it: the model asked for it, and a restore of the
// conversation must give the model the refusal rather than offer the call again. Its request
// and its abandonment go in one append: written as two, a crash between them left a call that
// never went out looking like one in flight (inspect listing it unresolved, a restore saying it
// may have run), for a person to check an effect that could not have happened.

/** `SessionRecorder.declineToolCall`. */
export function declineToolCall(
  state: RecorderState,
  call: BeforeToolCallOptions,
  reason: string,
  options: DecisionOptions = {},
): Promise<Attempt> {
  return inTurn(state, async () => {
    assertOptions(call, BEFORE_TOOL_CALL, "declineToolCall", {
      at: "$",
      needs: "declineToolCall needs the call ({ name, args }), then the reason",
    });
    const asked = askedToolCall(state, call);
    if (typeof reason !== "string" || reason.length === 0)
      throw new InvalidArgumentError("$.reason", "declining a tool call needs a reason");
    assertOptions(options, DECISION_OPTIONS, "declineToolCall", { at: "$.options" });
    const criteria = adoptCriteria(call, asked);
    // After an append whose outcome was unknown: this call's decline, if it got in, is the one.
    if (state.queue.unsure) await state.queue.resolveUnknown();
    const written = state.unsureDeclines.take(criteria);
    if (written !== undefined) return written;
    // A request a failed `beforeToolCall` of this call left stored: that call is declined.
    if (state.unsureRequests.orphans.length > 0) {
      const adopted = await adoptUnsure(state, criteria);
      if (adopted !== undefined) return abandoned(state, adopted, reason, options);
    }
    const match = matchToolCall(state, call, asked);
    if (match) {
      // The ledger holds its outcome (this decline, made before a crash): answered with it.
      const answered = answerFromLedger(match);
      if (answered !== undefined) return answered;
      // Its request only (recorded alone, by a version that wrote a decline in two appends, or
      // by a call that began): it will not run now, whatever it did.
      return abandoned(state, attemptFromRecorded(match.attempt), reason, options);
    }
    const request = toolRequest(state, call, asked, undefined);
    const { event, attempt, compact } = preparedRequest(
      state,
      atStep(request, call.stepId ?? uuidv7()),
    );
    event.eventId = uuidv7();
    attempt.requestedEventId = event.eventId;
    const abandonment = decision(state, "attempt.abandoned", attempt, reason, "declining", options);
    // Said in the event: this call never started (inspection tells it from one abandoned after
    // it may have run, as a crash leaves it).
    (abandonment.payload as JsonObject).declined = true;
    abandonment.eventId = uuidv7();
    let stored: LedgerEvent[];
    try {
      stored = await commitAllCompacted(state, [
        { event, compact },
        { event: abandonment, compact: state.compactor.begin() },
      ]);
    } catch (error) {
      state.unsureDeclines.failed({ event, abandonment, attempt }, error);
      throw error;
    }
    return declined(attempt, stored[0] as LedgerEvent, stored[1] as LedgerEvent);
  });
}

/** Abandons `attempt` (a request already stored) and hands it back answered with that. */
async function abandoned(
  state: RecorderState,
  attempt: Attempt,
  reason: string,
  options: DecisionOptions,
): Promise<Attempt> {
  const outcome = await abandonAttempt(state, attempt, reason, options);
  return answeredWith(attempt, outcome, "abandoned");
}
