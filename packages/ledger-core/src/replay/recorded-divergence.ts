import { ReplayDivergenceError } from "../events/errors.js";
import { isJsonObject, type JsonValue } from "../events/json.js";
import { divergenceText, firstDifference } from "./first-difference.js";
import type { RecordedAttempt } from "./recorded-attempts.js";

/**
 * The `replay-divergence` of the model call at `position` (0-based) of a re-execution whose
 * request (hashed as `requestHash`) is not the one `attempt` recorded there. Given the request,
 * it says where it differs, when the recorded one is at hand (read as stored, a compacted
 * request names blobs instead).
 */
export function modelDivergence(call: {
  position: number;
  attempt: RecordedAttempt;
  requestHash: string;
  request?: JsonValue | undefined;
}): ReplayDivergenceError {
  const { position, attempt, requestHash, request } = call;
  const payload = attempt.requested.payload;
  const recorded = isJsonObject(payload) ? payload.request : undefined;
  const difference =
    request === undefined || recorded === undefined
      ? undefined
      : firstDifference(recorded, request);
  return new ReplayDivergenceError(
    `model call ${position + 1} differs from the one recorded at seq ${attempt.requested.seq}${divergenceText(difference, "A request")}`,
    {
      seq: attempt.requested.seq,
      attemptId: attempt.attemptId,
      recordedHash: attempt.requestHash,
      requestHash,
      ...(difference ? { path: difference.path } : {}),
    },
  );
}

/** The `replay-divergence` of a retry of `retryOf` whose request is not the one `attempt` recorded. */
export function retryDivergence(
  call: { retryOf: string; requestHash: string },
  attempt: RecordedAttempt,
): ReplayDivergenceError {
  return new ReplayDivergenceError(
    `the retry of attempt ${call.retryOf} differs from the one recorded at seq ${attempt.requested.seq}`,
    {
      seq: attempt.requested.seq,
      attemptId: attempt.attemptId,
      recordedHash: attempt.requestHash,
      requestHash: call.requestHash,
    },
  );
}
