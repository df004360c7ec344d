import type { JsonObject, JsonValue, SerializedError } from "../events/json.js";
import type { ToolEffect } from "../events/types.js";

/**
 * What the ledger already holds for a call on resume: answer it instead of calling. `metadata`
 * is the outcome event's (what the adapter recorded with it, e.g. how to rebuild the answer);
 * `partial` is what a failed call had produced before it failed (`modelFailed`'s `partial`).
 */
export type ReplayedOutcome = (
  | { status: "completed"; result: JsonValue }
  | { status: "failed"; error: SerializedError; partial?: JsonValue }
  | { status: "abandoned"; reason: string }
) & { eventId: string; metadata?: JsonObject };

/**
 * One physical model or tool invocation (§3). Returned by `beforeModelCall` /
 * `beforeToolCall` once its `*.requested` event is committed, and handed back to
 * `modelCompleted`, `toolFailed`, `retry`, `abandon`...
 */
export interface Attempt {
  kind: "model" | "tool";
  sessionId: string;
  runId: string;
  stepId: string;
  attemptId: string;
  /** The attempt this one retries. */
  retryOf?: string;
  /** eventId and seq of the `*.requested` event. */
  requestedEventId: string;
  seq: number;
  /** The request as recorded (model request, or tool args), after redaction. */
  request: JsonValue;
  requestHash: string;
  /** The event that caused the call (a tool call: the model completion that asked for it). */
  causedByEventId?: string;
  toolCallId?: string;
  name?: string;
  effect?: ToolEffect;
  /**
   * Set on resume when the ledger already holds this call's outcome: the adapter returns it
   * (or rethrows the recorded error) without calling the model or the tool, and records nothing.
   */
  replayed?: ReplayedOutcome;
}
