import type { CompactSession } from "../compact/externalize.js";
import { asEscape, escapeMarkers } from "../compact/marker.js";
import type { KnownKeys } from "../events/argument-checks.js";
import { InvalidArgumentError } from "../events/errors.js";
import {
  isJsonObject,
  type JsonObject,
  type JsonValue,
  normalizeError,
  toPlainJson,
} from "../events/json.js";
import { validateMetadata } from "../store/validate-actor-metadata.js";
import { type Redaction, redactErrorStacks, redactPayload } from "./redact.js";

// Validates a value and applies redaction. Redaction paths are relative to the event
// payload, so a value recorded under `field` (request, args, response, result) is redacted
// as `{ [field]: value }`; the hash is taken after redaction. This is the value as the caller
// reads it back: what is stored is it escaped (`escapedPayload`) or compacted, which also
// escapes.
export function preparePayload(
  redact: Redaction | undefined,
  type: string,
  value: unknown,
  path: string,
  field?: string,
): JsonValue {
  const plain = toPlainJson(value === undefined ? null : value, path);
  if (redact === undefined) return plain;
  if (field === undefined) return redactPayload(plain, redact, { type }, "any");
  const redacted = redactPayload({ [field]: plain }, redact, { type }, "object");
  return (redacted as JsonObject)[field] ?? null;
}

/** `payload` as `redact` leaves it in an event of `type` (`SessionRecorder.redactedPayload`). */
export function redactedPayload(
  redact: Redaction | undefined,
  type: string,
  payload: unknown,
): JsonValue {
  if (typeof type !== "string" || type.length === 0)
    throw new InvalidArgumentError("$.type", "the event type must be a non-empty string");
  return preparePayload(redact, type, payload, "$.payload");
}

/** What `compactedPayload` stores: a value recorded as `preparePayload` takes it. */
export interface PayloadToStore {
  type: string;
  value: unknown;
  path: string;
  field?: string;
  /** Strings of `textThresholdBytes` or more go to blobs too: model requests and responses. */
  text?: boolean;
}

/**
 * `preparePayload` as stored by an event whose payload the compactor walks (§8): every
 * recorded payload but failures and reasons. Redacted first, so what a redaction takes out
 * never reaches a blob; then each subtree over the threshold goes to a blob (its ref added to
 * `compact`, for `commitCompacted` to put and index) and user objects with a `$ledger` key are
 * escaped, as `escapedPayload` would (the compactor escapes as it walks, also with `compact:
 * false`).
 */
export function compactedPayload(
  compact: CompactSession,
  redact: Redaction | undefined,
  payload: PayloadToStore,
): JsonValue {
  const { type, value, path, field } = payload;
  const prepared = preparePayload(redact, type, value, path, field);
  return compact.value(prepared, { text: payload.text === true });
}

/**
 * `preparePayload` as stored by an event the compactor does not walk (a failure, a reason):
 * user objects with a `$ledger` key escaped (compact/marker.ts), so every read gives them back
 * as they were.
 */
export function escapedPayload(
  redact: Redaction | undefined,
  type: string,
  value: unknown,
  path: string,
  field?: string,
): JsonValue {
  return escapeMarkers(preparePayload(redact, type, value, path, field));
}

// A reason (abandon, approve, cancelRun) is free text a person or policy wrote, and may name
// what it is about: redacted as `{ reason }`, the field of its payload.
export function reasonPayload(
  redact: Redaction | undefined,
  type: string,
  reason: unknown,
): JsonValue {
  return escapedPayload(redact, type, reason, "$.reason", "reason");
}

// A failure's payload `{ error }` (the error normalised to `{ name, message, stack?, cause? }`)
// is redacted as a whole (paths such as `error.message` are relative to it): provider and tool
// errors quote credentials too. What the redaction took out of an error is taken out of its
// stack too, which repeats the message. Returned as stored (escaped); fields the recorder adds
// go in `fieldsOf(payload)`.
export function failurePayload(
  redact: Redaction | undefined,
  type: string,
  error: unknown,
): JsonObject {
  const payload: JsonObject = { error: normalizeError(error) as never };
  if (redact === undefined) return payload;
  const redacted = redactPayload(payload, redact, { type }, "object");
  // A path list can too (`**` puts "[redacted]" in place of the whole payload).
  if (!isJsonObject(redacted))
    throw new InvalidArgumentError(
      "$.redact",
      "a redaction must keep a failure's payload an object",
    );
  const redactedError = redacted.error;
  let scrubbed = redacted;
  if (redactedError !== undefined && payload.error !== undefined) {
    const stack = redactErrorStacks(payload.error, redactedError);
    if (stack !== redactedError) scrubbed = { ...redacted, error: stack };
  }
  // Only a redact function's fields can hold a `$ledger` key: a normalised error has none.
  return escapeMarkers(scrubbed) as JsonObject;
}

/**
 * The object a recorder adds its own fields to in a failure payload it stored escaped (a redact
 * function gave it a `$ledger` key): the escaped object, which reads give back with them.
 */
export function fieldsOf(payload: JsonObject): JsonObject {
  return asEscape(payload) ?? payload;
}

/** The options of a call that takes only `metadata` (an outcome, a retry, a checkpoint, an input). */
export interface MetadataOption {
  metadata?: JsonObject;
}

/** `MetadataOption`'s one key, for `assertOptions`. */
export const METADATA_ONLY: KnownKeys<MetadataOption> = { metadata: true };

/**
 * Per-call metadata, validated here (`invalid-argument` at `path`, the caller's option): the
 * recorder's events reach the store prevalidated, and one that does not is merged with the
 * recorder's metadata first, where a string would be spread into `{ "0": ... }` keys.
 */
export function callMetadata(
  metadata: JsonObject | undefined,
  path = "$.metadata",
): JsonObject | undefined {
  return metadata === undefined ? undefined : validateMetadata(metadata, path, "invalid-argument");
}
