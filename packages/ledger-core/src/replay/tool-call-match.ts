import { ReplayDivergenceError } from "../events/errors.js";
import { isJsonObject, type JsonValue } from "../events/json.js";
import { divergenceText, firstDifference } from "./first-difference.js";
import type { RecordedAttempt } from "./recorded-attempts.js";

/** A tool call as the cursor matches it. */
export interface ToolCallToMatch {
  toolCallId?: string | undefined;
  name: string;
  /** hashJson of `{ name, args }`. */
  requestHash: string;
  /** `{ name, args }` as hashed: a divergence then says where it differs from the recorded one. */
  request?: JsonValue | undefined;
}

/** `replay-divergence` unless the recorded tool attempt has the call's name and request. */
export function sameToolRequest(attempt: RecordedAttempt, call: ToolCallToMatch): void {
  if (attempt.requestHash === call.requestHash && attempt.name === call.name) return;
  // As hashed, from the recorded request (read as stored, compacted arguments name blobs).
  const payload = attempt.requested.payload;
  const difference =
    call.request === undefined || !isJsonObject(payload)
      ? undefined
      : firstDifference({ name: payload.name ?? null, args: payload.args ?? null }, call.request);
  throw new ReplayDivergenceError(
    `tool call ${call.toolCallId ?? call.name} differs from the one recorded at seq ${attempt.requested.seq}${divergenceText(difference, "A tool call")}`,
    {
      seq: attempt.requested.seq,
      attemptId: attempt.attemptId,
      recordedHash: attempt.requestHash,
      requestHash: call.requestHash,
      recordedName: attempt.name ?? null,
      name: call.name,
      ...(difference ? { path: difference.path } : {}),
    },
  );
}
