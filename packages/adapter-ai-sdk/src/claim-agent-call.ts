import { type Attempt, InvalidArgumentError } from "@agent-ledger/core";
import type { AgentCallClaim, AgentCallClaims } from "./agent-call-claim.js";
import { type OpenStreams, settledOrAfter } from "./open-streams.js";
import type { ToolCallback } from "./tool-callback-context.js";

/**
 * How long a call waits for the stream of the call before it (one the SDK drains after its
 * consumer stopped reading) to be recorded before it is refused.
 */
export const OPEN_STREAM_WAIT_MS = 60_000;
/** How often a waiting call looks again whether the stream is still read. */
const WAIT_STEP_MS = 50;

/**
 * Claims the run for an agent's language model call (one made outside a wrapped tool), before
 * anything is recorded. An agent makes one call at a time (the SDK's retries follow its
 * failure): another still in flight is a second agent on this recorder, which replay could not
 * tell apart from the first, so it is refused here rather than replayed wrong on resume.
 *
 * Except a stream being read: the SDK's `streamText` reads a model stream to its end even when
 * its consumer stops (a `break` out of `fullStream`), and the app's next call comes while it
 * does. That call waits until the stream's outcome is recorded (up to `OPEN_STREAM_WAIT_MS`,
 * while the stream is read on, until the call's `abortSignal` aborts). Once only: a call that
 * finds the run held by a call that waited is refused, so two agents whose calls take turns
 * this way are still told apart. A stream left unread (a `doStream` or `streamObject` not read
 * to its end) is refused once it has been idle for `READ_IDLE_MS`.
 *
 * A call made in a wrapped tool's callback (`callback`: the part and toolCallId of the
 * `onInputStart` / `onInputDelta` / `onInputAvailable` / `needsApproval` it runs in) is taken
 * as the stream's if the stream waits at that part of that tool call (see `AgentCallClaims`).
 */
export async function claimAgentCall(options: {
  claims: AgentCallClaims;
  streams: OpenStreams;
  runId: string;
  abortSignal: AbortSignal | undefined;
  callback: ToolCallback | undefined;
}): Promise<AgentCallClaim> {
  const { claims, streams, abortSignal, callback } = options;
  const deadline = Date.now() + OPEN_STREAM_WAIT_MS;
  let waited = false;
  for (;;) {
    const claim = claims.claim(waited, callback);
    if (claim) return claim;
    const held = claims.holder;
    const read =
      typeof held === "object" && !claims.holderWaited ? streams.beingRead(held) : undefined;
    if (!read || Date.now() >= deadline) throw refusal(options, held);
    waited = true;
    await settledOrAfter(
      read,
      Math.min(WAIT_STEP_MS, Math.max(0, deadline - Date.now())),
      abortSignal,
    );
    if (abortSignal?.aborted) throw abortSignal.reason;
  }
}

function refusal(
  { claims, streams, runId }: { claims: AgentCallClaims; streams: OpenStreams; runId: string },
  held: Attempt | "claimed" | undefined,
): InvalidArgumentError {
  const concurrent = `two agents (or two generateText / streamText calls) are running at the same time on one recorder, and a resumed run replays its calls in the order they were recorded, so it could not tell them apart. Give each concurrent agent its own recorder: recorder.child({ actor }) or its own run`;
  // streamText awaits the tool's onInputStart / onInputDelta there: a call made in one of a
  // tool not wrapped with this recorder cannot be told from another agent's.
  const wait = typeof held === "object" ? claims.waitOf(held) : undefined;
  if (typeof held === "object" && wait?.at === "tool-input")
    return new InvalidArgumentError(
      "$.recorder",
      `a model call started on run ${runId} while the stream of its model call ${held.attemptId} waited after a tool input part of tool call ${wait.toolCallId}${wait.toolName !== undefined ? ` (tool ${JSON.stringify(wait.toolName)})` : ""}: streamText reads that stream on only once the tool's onInputStart / onInputDelta has returned. A model call made in that callback is recorded as the run's next call only if the tool was given to streamText through wrapTools(tools, { recorder }) with this recorder (its callbacks then run in a context the middleware knows); pass the tool through wrapTools. Otherwise ${concurrent}`,
    );
  // streamText awaits the tool's onInputAvailable / needsApproval there, once the call is
  // parsed: a call made outside them (no repair runs after them) is no call of theirs.
  if (typeof held === "object" && wait?.at === "tool-call")
    return new InvalidArgumentError(
      "$.recorder",
      `a model call started on run ${runId} while the stream of its model call ${held.attemptId} waited at the tool-call part of tool call ${wait.toolCallId} (tool ${JSON.stringify(wait.toolName)}), in that tool's onInputAvailable / needsApproval (given through wrapTools), which streamText awaits before it reads that stream on: a model call made inside them is recorded as the run's next call, and this one was made outside them. So ${concurrent}`,
    );
  // A stream read some other way than streamText (the model's doStream, streamObject) may
  // have been left open.
  const kind = typeof held === "object" ? streams.kindOf(held) : undefined;
  if (typeof held === "object" && kind !== undefined)
    return new InvalidArgumentError(
      "$.recorder",
      `a model call started on run ${runId} while the stream of its model call ${held.attemptId} (${kind}) was still open: not read to its end, cancelled or aborted (a stream still being read, as streamText drains one its consumer stopped reading, is waited for up to ${OPEN_STREAM_WAIT_MS / 1000} s). If that stream was left unread, cancel it (stream.cancel(), or its reader's cancel(); for streamObject, its partialObjectStream, which can be read once) or abort the call's abortSignal: it is then recorded as failed with what had streamed, and the next call goes ahead. Otherwise ${concurrent}`,
    );
  return new InvalidArgumentError(
    "$.recorder",
    `a model call started on run ${runId} while another of its calls was in flight: ${concurrent}`,
  );
}
