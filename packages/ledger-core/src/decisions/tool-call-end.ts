import type { JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import type { SessionRecorder } from "../recorder/session-recorder.js";
import type { RecordedAttempt } from "../replay/replay-cursor.js";

/**
 * How a tool call ended, as the runs made inside it (its child runs) end with it: completed,
 * failed with its error, or abandoned with the reason a person or policy gave.
 */
export type ToolCallEnd =
  | { failed: false }
  | { failed: true; error: unknown }
  | { abandoned: string };

/** What a reason calls a tool call: `tool call research (call_0)`. */
export function toolCallLabel(call: {
  name?: string | undefined;
  toolCallId?: string | undefined;
}) {
  const id = call.toolCallId === undefined ? "" : ` (${call.toolCallId})`;
  return `tool call ${call.name ?? "(unnamed)"}${id}`;
}

/**
 * Why a call left in flight inside the tool call `label`, which ended as `ended`, is abandoned:
 * that tool call will not run again, so nothing would ever give the call an outcome.
 */
export function abandonedInside(label: string, ended: ToolCallEnd): string {
  if ("abandoned" in ended) return `its ${label} was abandoned: ${ended.abandoned}`;
  return `left in flight by its ${label}, which had ended: its answer was never recorded, and that tool call is not run again`;
}

/** Closes `run` (a tool call's child run) as its tool call ended. */
export function closeAsCallEnded(run: SessionRecorder, ended: ToolCallEnd): Promise<LedgerEvent> {
  if ("abandoned" in ended) return run.cancelRun(ended.abandoned);
  return ended.failed ? run.failRun(ended.error) : run.completeRun();
}

function payloadField(event: LedgerEvent | undefined, field: string): JsonValue | undefined {
  const payload = event?.payload;
  if (payload === null || typeof payload !== "object" || Array.isArray(payload)) return undefined;
  return payload[field];
}

/**
 * How a recorded tool attempt ended, as read from the ledger (its failure is the recorded
 * `{ name, message, ... }`); undefined while it is in flight.
 */
export function endOfRecorded(attempt: RecordedAttempt): ToolCallEnd | undefined {
  switch (attempt.status) {
    case "completed":
      return { failed: false };
    case "failed":
      return { failed: true, error: payloadField(attempt.outcome, "error") ?? null };
    case "abandoned": {
      const reason = payloadField(attempt.outcome, "reason");
      return { abandoned: typeof reason === "string" ? reason : "abandoned" };
    }
    default:
      return undefined;
  }
}
