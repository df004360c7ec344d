import { assertObjectArgument, assertOptions, attemptNeeded } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import { assertId } from "../events/ids.js";
import { toPlainJson } from "../events/json.js";
import type { ToolEffect } from "../events/types.js";
import type { Attempt } from "./attempt.js";
import {
  adoptUnsure,
  assertToolName,
  DEFAULT_EFFECT,
  replayTool,
  toolEffect,
} from "./call-requests.js";
import { atStep, commitRequest, type RequestCommon } from "./commit-request.js";
import { METADATA_ONLY, type MetadataOption } from "./prepare-payload.js";
import type { RecorderState } from "./recorder-state.js";
import { answerFromLedger } from "./replayed-calls.js";
import { inTurn } from "./turns.js";

/** `SessionRecorder.retry`: a new attempt of `attempt`'s step with the same request. */
export function retryCall(
  state: RecorderState,
  attempt: Attempt,
  options: MetadataOption,
): Promise<Attempt> {
  // In its turn, as a recorded retry is matched by order like the call it repeats; a bad
  // attempt (even a missing one) rejects, never throws.
  return inTurn(state, () => {
    assertObjectArgument(attempt, "$", attemptNeeded("retrying"));
    assertOptions(options, METADATA_ONLY, "retry");
    // The attempt comes back from the caller and its parts enter a prevalidated event: each is
    // checked here, as `before*` checks a new call.
    if (attempt.kind !== "model" && attempt.kind !== "tool")
      throw new InvalidArgumentError("$.kind", "an attempt is a model or tool call");
    assertId(attempt.attemptId, "$.attemptId");
    if (attempt.toolCallId !== undefined) assertId(attempt.toolCallId, "$.toolCallId");
    // Any string (an event written without the recorder may have recorded "" here).
    if (typeof attempt.requestHash !== "string")
      throw new InvalidArgumentError("$.requestHash", "requestHash must be a string");
    toPlainJson(attempt.requestHash, "$.requestHash");
    // Only a tool call's name enters its payload.
    if (attempt.kind === "tool") assertToolName(attempt.name);
    const effect = attempt.effect !== undefined ? toolEffect(attempt.effect) : undefined;
    const common = {
      kind: attempt.kind,
      request: toPlainJson(attempt.request ?? null, "$.request"),
      requestHash: attempt.requestHash,
      ...(attempt.name !== undefined ? { name: attempt.name } : {}),
      toolCallId: attempt.toolCallId,
      ...(effect !== undefined ? { effect } : {}),
      // A retry has the cause of the attempt it repeats (the same model completion asked).
      causedByEventId: attempt.causedByEventId,
      metadata: options.metadata,
    };
    if (state.queue.unsure || state.unsureRequests.orphans.length > 0)
      // A retry whose first try was rejected, its request perhaps stored: that one is this call
      // (noted for child runs when the read-back found it: commitRequest's settlement).
      return adoptUnsure(state, {
        kind: attempt.kind,
        requestHash: attempt.requestHash,
        name: attempt.kind === "tool" ? attempt.name : undefined,
        toolCallId: attempt.toolCallId,
        retryOf: attempt.attemptId,
      }).then((adopted) => adopted ?? newRetry(state, attempt, common, effect));
    return newRetry(state, attempt, common, effect);
  });
}

/** A retry of `attempt` with `common` (its request, checked): answered on resume, else committed. */
function newRetry(
  state: RecorderState,
  attempt: Attempt,
  common: RequestCommon,
  effect: ToolEffect | undefined,
): Promise<Attempt> {
  // On resume, a retry the crashed process already made is answered from the ledger too.
  const match = state.replay?.takeRetry({
    kind: attempt.kind,
    retryOf: attempt.attemptId,
    requestHash: attempt.requestHash,
  });
  if (match && attempt.kind === "tool")
    // A tool attempt's name was checked above (assertToolName), so common has it.
    return replayTool(
      state,
      match,
      effect ?? DEFAULT_EFFECT,
      common as RequestCommon & { name: string },
    );
  if (match) {
    const replayed = answerFromLedger(match);
    if (replayed) return Promise.resolve(replayed);
  }
  return commitRequest(
    state,
    atStep(
      common,
      match?.attempt.stepId ?? attempt.stepId,
      match?.attempt.attemptId ?? attempt.attemptId,
    ),
    { match, retriedEventId: match?.attempt.requested.eventId ?? attempt.requestedEventId },
  );
}
