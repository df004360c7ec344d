import type { CompactOptions } from "../compact/externalize.js";
import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import type { JsonObject } from "../events/json.js";
import type { Actor } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import type { Redaction } from "./redact.js";

export interface SessionRecorderOptions {
  store: EventStore;
  sessionId: string;
  /** Defaults to a new UUIDv7. */
  runId?: string;
  actor: Actor;
  /** Set on a child run: the run that started it. */
  parentRunId?: string;
  /** The event that caused this run (e.g. the tool call that handed off). */
  causedByEventId?: string;
  /** Removed from payloads before hashing and persisting. */
  redact?: Redaction;
  /** Host metadata stored on every event of this recorder. */
  metadata?: JsonObject;
  /**
   * Content-addressed payloads (§8), on by default: the chat messages of a model request
   * (short ones inline, see `INLINE_MESSAGE_BYTES` and `INLINE_LIST_BYTES`) and every long
   * string of model requests and responses go to the blob store by sha256,
   * a request's message list extends the previous request's list (structural sharing), and
   * any subtree over `thresholdBytes` of every payload but failures and reasons (model and
   * tool payloads, the run's input and output, inputs, checkpoints, custom events) goes to a
   * blob; so does such a payload that is one long string (a serialized RunState). The event
   * keeps `{ "$ledger": kind, ref }` markers and lists the refs it introduced in
   * `evidenceRefs`; `requestHash` stays the hash of the full request. `false` stores
   * payloads inline.
   */
  compact?: CompactOptions | false;
}

/** Options of `SessionRecorder.resume`. */
export interface ResumeOptions {
  /**
   * Resolve blob references in the recorded events (default true), so replayed outcomes and
   * `attempt.request` come back as the adapter sent and received them. `false` hands them
   * over as stored, with `{ "$ledger": ... }` markers.
   */
  resolve?: boolean;
}

// Every option, as a record the compiler checks against the interfaces: a new option
// cannot be forgotten here and then refused as unknown.
const RECORDER_OPTIONS: KnownKeys<SessionRecorderOptions> = {
  store: true,
  sessionId: true,
  runId: true,
  actor: true,
  parentRunId: true,
  causedByEventId: true,
  redact: true,
  metadata: true,
  compact: true,
};
const RESUME_OPTIONS: KnownKeys<ResumeOptions> = { resolve: true };

/**
 * `invalid-argument` at `$` unless the recorder's options are an object (not a bare id), and
 * at `$.<key>` for a key that is none of its options (with `resume`: also `resolve`).
 */
export function assertOptionsObject(options: unknown, { resume = false } = {}): void {
  const known = resume ? { ...RECORDER_OPTIONS, ...RESUME_OPTIONS } : RECORDER_OPTIONS;
  assertOptions(options, known, resume ? "SessionRecorder.resume" : "a recorder", {
    at: "$",
    needs: "a recorder needs options { store, sessionId, actor, runId?, ... }",
  });
}
