import { assertObjectArgument, type KnownKeys, unknownKey } from "../events/argument-checks.js";
import { InvalidArgumentError, InvalidEventError, LedgerError } from "../events/errors.js";
import { assertId, isValidId, uuidv7 } from "../events/ids.js";
import { childPath, type JsonObject, type JsonValue, thrown, toPlainJson } from "../events/json.js";
import { type Actor, EVENT_TYPES, type NewEvent, type ToolEffect } from "../events/types.js";
import { type EncodedBlob, isBlobRef, prepareBlobs } from "./blob.js";
import type {
  AppendRequest,
  EventStore,
  ListSessionsRequest,
  ReadRunRequest,
  ReadSessionRequest,
} from "./event-store.js";
import { validateActor, validateMetadata } from "./validate-actor-metadata.js";

const knownTypes: ReadonlySet<string> = new Set(EVENT_TYPES);
/** The kinds a tool call's `effect` may declare (§3), in the order messages list them. */
export const TOOL_EFFECT_KINDS: readonly ToolEffect["kind"][] = [
  "none",
  "read",
  "write",
  "unknown",
];
const effectKinds: ReadonlySet<string> = new Set(TOOL_EFFECT_KINDS);
const idFields = ["stepId", "attemptId", "retryOf", "parentRunId", "causedByEventId"] as const;
const allowedFields = new Set<string>([
  "eventId",
  "type",
  ...idFields,
  "actor",
  "payload",
  "evidenceRefs",
  "metadata",
]);

/** A validated, deep-copied event ready to be planned into a run. */
export type ValidEvent = Omit<NewEvent, "eventId" | "payload"> & {
  eventId: string;
  payload: JsonValue;
};

export interface ValidAppend {
  sessionId: string;
  runId: string;
  expectedSeq: number;
  events: ValidEvent[];
  /** `blobs` hashed and encoded, in input order (empty when the request has none). */
  blobs: EncodedBlob[];
}

/**
 * Events whose payload and metadata are fresh copies that already passed `toPlainJson` and
 * that no caller can reach, with a frozen, validated actor and no field a writer may not set:
 * the recorder builds them so (a tool request's effect checked too). `validateNewEvent` still
 * checks their ids and type, but takes payload, metadata and actor as they are instead of
 * walking and copying them a second time
 * (measured: the largest share of a recorded call's validation).
 * This module is not exported from the package, so only its own code can mark an event.
 */
const prevalidated = new WeakSet<object>();

/** Marks `event` (see `prevalidated`); returns it. */
export function markPrevalidated<T extends object>(event: T): T {
  prevalidated.add(event);
  return event;
}

/** Validates one event; returns a deep copy. Paths are relative to `path`. */
export function validateNewEvent(value: unknown, path: string): ValidEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new InvalidEventError(path, "an event must be an object");
  }
  const input = value as Record<string, unknown>;
  const trusted = prevalidated.has(input);
  // The recorder sets only writer fields (its events are built from literals).
  if (!trusted) {
    for (const key of Object.keys(input)) {
      if (input[key] !== undefined && !allowedFields.has(key)) {
        throw new InvalidEventError(
          childPath(path, key),
          "not a field a writer may set (the store assigns seq, hashes, cursor and time)",
        );
      }
    }
  }
  // Paths are only built for a bad value: on every valid event they cost more than the checks.
  // (A field's path is `${path}.field`, what childPath gives for an identifier, without its test.)
  const given = input.eventId;
  if (given !== undefined && !isValidId(given)) assertId(given, childPath(path, "eventId"));
  const eventId = given === undefined ? uuidv7() : (given as string);
  const type = input.type;
  if (
    typeof type !== "string" ||
    !(knownTypes.has(type) || (type.startsWith("x.") && type.length > 2 && type.length <= 255))
  ) {
    throw new InvalidEventError(
      childPath(path, "type"),
      `unknown event type ${JSON.stringify(type)} (custom types start with "x.")`,
    );
  }
  const out: ValidEvent = { eventId, type: type as ValidEvent["type"], payload: null };
  for (const field of idFields) {
    const id = input[field];
    if (id === undefined) continue;
    if (!isValidId(id)) assertId(id, childPath(path, field));
    out[field] = id as string;
  }
  // A recorder's actor was validated (and frozen) when the recorder was made.
  if (input.actor !== undefined)
    out.actor = trusted ? (input.actor as Actor) : validateActor(input.actor, `${path}.actor`);
  out.payload =
    input.payload === undefined
      ? null
      : trusted
        ? (input.payload as JsonValue)
        : toPlainJson(input.payload, `${path}.payload`);
  if (input.evidenceRefs !== undefined) {
    const refsPath = `${path}.evidenceRefs`;
    if (!Array.isArray(input.evidenceRefs))
      throw new InvalidEventError(refsPath, "evidenceRefs must be an array");
    // An indexed loop, not map: map skips the holes of a sparse array and would keep them.
    const refs: string[] = [];
    for (let index = 0; index < input.evidenceRefs.length; index++) {
      const ref: unknown = input.evidenceRefs[index];
      if (!isBlobRef(ref))
        throw new InvalidEventError(
          childPath(refsPath, index),
          "a reference must be sha256:<64 lowercase hex>",
        );
      refs.push(ref);
    }
    out.evidenceRefs = refs;
  }
  if (input.metadata !== undefined) {
    out.metadata = trusted
      ? (input.metadata as JsonObject)
      : validateMetadata(input.metadata, `${path}.metadata`);
  }
  // The recorder checked a tool's effect as it built the request (`toolEffect`).
  if (type === "tool.requested" && !trusted) validateEffect(out.payload, `${path}.payload`);
  return out;
}

/** Checks `payload.effect` of a tool request, if any: `{ kind, idempotent }` (§3). */
export function validateEffect(payload: JsonValue, path: string): void {
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) return;
  const effect = payload.effect;
  if (effect === undefined) return;
  const effectPath = childPath(path, "effect");
  if (typeof effect !== "object" || effect === null || Array.isArray(effect)) {
    throw new InvalidEventError(effectPath, "effect must be { kind, idempotent }");
  }
  if (!effectKinds.has(effect.kind as string)) {
    throw new InvalidEventError(
      childPath(effectPath, "kind"),
      "effect kind must be none, read, write or unknown",
    );
  }
  if (typeof effect.idempotent !== "boolean") {
    throw new InvalidEventError(
      childPath(effectPath, "idempotent"),
      "effect idempotent must be a boolean",
    );
  }
}

/**
 * Validates a whole append request before any I/O (§6): ids, types, plain-JSON payloads and
 * metadata, no id twice in one batch. Returns deep copies; the caller's objects are never kept.
 */
export function validateAppend(request: AppendRequest): ValidAppend {
  try {
    return validateRequest(request);
  } catch (error) {
    throw asBadInput(error, "$");
  }
}

/**
 * A getter or proxy of the caller's that throws while it is read is bad input too: the error
 * becomes `invalid-event` at `path`, not the caller's own error escaping from the store.
 */
function asBadInput(error: unknown, path: string): unknown {
  if (LedgerError.isInstance(error)) return error;
  return new InvalidEventError(path, `reading it threw (${thrown(error)})`);
}

/**
 * Refuses a key `call` does not take, as its other bad arguments, `invalid-event`: `blob` for
 * `blobs` left the events naming content that was never stored, `afterCursor` for `after` read
 * the session again from its start.
 */
function assertRequestKeys(
  request: object,
  known: Readonly<Record<string, true>>,
  call: string,
): void {
  let key: string | undefined;
  try {
    key = unknownKey(request, known);
  } catch (error) {
    throw asBadInput(error, "$");
  }
  if (key !== undefined)
    throw new InvalidEventError(
      childPath("$", key),
      `${call} takes ${Object.keys(known).join(", ")}, not ${JSON.stringify(key)}`,
    );
}

const APPEND_KEYS: KnownKeys<AppendRequest> = {
  sessionId: true,
  runId: true,
  expectedSeq: true,
  events: true,
  blobs: true,
};
const READ_RUN_KEYS: KnownKeys<ReadRunRequest> = {
  sessionId: true,
  runId: true,
  fromSeq: true,
  limit: true,
};
const READ_SESSION_KEYS: KnownKeys<ReadSessionRequest> = {
  sessionId: true,
  after: true,
  limit: true,
};
const LIST_SESSIONS_KEYS: KnownKeys<ListSessionsRequest> = { after: true, limit: true };

function validateRequest(request: AppendRequest): ValidAppend {
  if (typeof request !== "object" || request === null)
    throw new InvalidEventError("$", "append needs { sessionId, runId, expectedSeq, events }");
  assertRequestKeys(request, APPEND_KEYS, "append");
  assertId(request.sessionId, "$.sessionId");
  assertId(request.runId, "$.runId");
  if (!Number.isSafeInteger(request.expectedSeq) || request.expectedSeq < 0) {
    throw new InvalidEventError("$.expectedSeq", "expectedSeq must be a non-negative integer");
  }
  if (!Array.isArray(request.events) || request.events.length === 0) {
    throw new InvalidEventError("$.events", "events must be a non-empty array");
  }
  const seen = new Set<string>();
  // An indexed loop, not map: a hole in a sparse array must be rejected, not skipped.
  const events: ValidEvent[] = [];
  for (let index = 0; index < request.events.length; index++) {
    const path = `$.events[${index}]`;
    let valid: ValidEvent;
    try {
      valid = validateNewEvent(request.events[index], path);
    } catch (error) {
      throw asBadInput(error, path);
    }
    if (seen.has(valid.eventId))
      throw new InvalidEventError(
        `${path}.eventId`,
        `eventId ${valid.eventId} appears twice in one batch`,
      );
    seen.add(valid.eventId);
    events.push(valid);
  }
  return {
    sessionId: request.sessionId,
    runId: request.runId,
    expectedSeq: request.expectedSeq,
    events,
    blobs: request.blobs === undefined ? [] : prepareBlobs(request.blobs, "$.blobs"),
  };
}

/** `invalid-argument` unless a call's argument is an object (`null`, a string... are not). */
function assertRequest(request: unknown): asserts request is Record<string, unknown> {
  assertObjectArgument(
    request,
    "$",
    "the call needs an object argument, e.g. { sessionId, runId }",
  );
}

/** Checks a call's `{ sessionId }`. */
export function assertSessionAddress(request: unknown): asserts request is { sessionId: string } {
  assertRequest(request);
  assertId(request.sessionId, "$.sessionId");
}

/** Checks a call's `{ sessionId, runId }`. */
export function assertRunAddress(
  request: unknown,
): asserts request is { sessionId: string; runId: string } {
  assertSessionAddress(request);
  assertId((request as { runId?: unknown }).runId, "$.runId");
}

/** Validates `fork` arguments (§4): ids, and `uptoSeq` as a positive integer. */
export function validateFork(request: {
  sessionId: string;
  runId: string;
  newRunId: string;
  uptoSeq: number;
}): void {
  assertRunAddress(request);
  assertId(request.newRunId, "$.newRunId");
  if (!Number.isSafeInteger(request.uptoSeq) || request.uptoSeq < 1) {
    throw new InvalidEventError(
      "$.uptoSeq",
      "uptoSeq must be a positive integer (the length of the new run)",
    );
  }
}

/** Validates paging arguments shared by the read calls. */
export function validatePaging(
  request: { limit?: number | undefined },
  extra: Record<string, number | undefined> = {},
): void {
  assertRequest(request);
  if (request.limit !== undefined && (!Number.isSafeInteger(request.limit) || request.limit < 1)) {
    throw new InvalidEventError("$.limit", "limit must be a positive integer");
  }
  for (const [key, value] of Object.entries(extra)) {
    if (value !== undefined && (!Number.isSafeInteger(value) || value < 0)) {
      throw new InvalidEventError(`$.${key}`, `${key} must be a non-negative integer`);
    }
  }
}

/** Checks `readRun`'s request: its address, `fromSeq` and `limit`, and no other key. */
export function validateReadRun(request: ReadRunRequest): void {
  assertRunAddress(request);
  assertRequestKeys(request, READ_RUN_KEYS, "readRun");
  validatePaging(request, { fromSeq: request.fromSeq });
}

/** Checks `readSession`'s request: its session, `after` and `limit`, and no other key. */
export function validateReadSession(request: ReadSessionRequest): void {
  assertSessionAddress(request);
  assertRequestKeys(request, READ_SESSION_KEYS, "readSession");
  validatePaging(request, { after: request.after });
}

/** Checks `listSessions`'s request: `after` (a session id) and `limit`, and no other key. */
export function validateListSessions(request: ListSessionsRequest): void {
  validatePaging(request);
  assertRequestKeys(request, LIST_SESSIONS_KEYS, "listSessions");
  if (request.after !== undefined) assertId(request.after, "$.after");
}

/**
 * `invalid-argument` at `path` unless `store` looks like an `EventStore` (has `append` and
 * `readSession`): a URL string or a missing store otherwise fails deep inside with a TypeError.
 */
export function assertEventStore(store: unknown, path = "$.store"): asserts store is EventStore {
  const candidate = store as Partial<Record<keyof EventStore, unknown>> | null | undefined;
  if (
    typeof candidate?.append !== "function" ||
    typeof candidate.readSession !== "function" ||
    typeof candidate.readRun !== "function"
  )
    throw new InvalidArgumentError(
      path,
      `an EventStore is needed (openStore(url) makes one), got ${store === null ? "null" : typeof store}`,
    );
}
