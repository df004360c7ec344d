import {
  type JsonObject,
  type JsonValue,
  normalizeError,
  rebuiltError,
  type SerializedError,
} from "@agent-ledger/core";
import { APICallError } from "@ai-sdk/provider";
import { toJsonValue } from "./plain-json.js";

// A recorded failure is thrown again on replay, and the SDK must then decide as it did live
// whether to retry it, and how long to wait. Its retry (ai's retry-with-exponential-backoff)
// reads: `APICallError.isInstance(error) && error.isRetryable`, or the same of
// `GatewayError` (@ai-sdk/gateway), and the delay from the `retry-after-ms` / `retry-after`
// response headers of an APICallError, or of a GatewayError's APICallError cause. Those
// `isInstance` checks look for brands: `Symbol.for("vercel.ai.…")` properties set to true,
// which work across copies of a package. So a failure keeps, in its metadata, the brands of
// the error and the fields the retry reads, and the error is rebuilt with them.

/** The prefix of the AI SDK's error brands (`vercel.ai.error.AI_APICallError`, `vercel.ai.gateway.error`...). */
const BRAND_PREFIX = "vercel.ai.";
const API_CALL_ERROR_BRAND = "vercel.ai.error.AI_APICallError";
/** The response headers the SDK's backoff reads: never the others (cookies, request ids). */
const RETRY_HEADERS = ["retry-after-ms", "retry-after"] as const;
/** How deep a chain of branded causes is kept (a GatewayError around an APICallError is 2). */
const MAX_CAUSES = 3;

function brandsOf(error: object): string[] {
  const brands: string[] = [];
  for (const symbol of Object.getOwnPropertySymbols(error)) {
    const key = Symbol.keyFor(symbol);
    if (key?.startsWith(BRAND_PREFIX) && (error as Record<symbol, unknown>)[symbol] === true)
      brands.push(key);
  }
  return brands.sort();
}

function retryHeadersOf(headers: unknown): JsonObject | undefined {
  if (typeof headers !== "object" || headers === null) return undefined;
  const kept: JsonObject = {};
  for (const name of RETRY_HEADERS) {
    const value = (headers as Record<string, unknown>)[name];
    if (typeof value === "string") kept[name] = value;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

function aiSdkFactsOf(error: unknown, depth: number): JsonObject | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const brands = brandsOf(error);
  if (brands.length === 0) return undefined;
  const source = error as {
    isRetryable?: unknown;
    statusCode?: unknown;
    type?: unknown;
    responseHeaders?: unknown;
    cause?: unknown;
  };
  const facts: Record<string, unknown> = {};
  // Written since the first version: an APICallError is rebuilt as one (the brands follow).
  if (brands.includes(API_CALL_ERROR_BRAND)) facts.apiCallError = true;
  else facts.brands = brands;
  if (typeof source.isRetryable === "boolean") facts.isRetryable = source.isRetryable;
  if (typeof source.statusCode === "number") facts.statusCode = source.statusCode;
  if (typeof source.type === "string") facts.type = source.type;
  const headers = retryHeadersOf(source.responseHeaders);
  if (headers) facts.retryHeaders = headers;
  const cause = depth < MAX_CAUSES ? aiSdkFactsOf(source.cause, depth + 1) : undefined;
  if (cause) facts.cause = cause;
  return toJsonValue(facts) as JsonObject;
}

/** Metadata kept on `model.failed` so a replayed failure is retried (or not) as the original was. */
export function failureMetadataOf(error: unknown): JsonObject | undefined {
  const aiSdk = aiSdkFactsOf(error, 0);
  return aiSdk ? { aiSdk } : undefined;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function rebuild(recorded: SerializedError, facts: JsonObject | undefined): Error {
  // A branded cause is rebuilt with its facts; any other as core rebuilds it (rebuiltError).
  const branded = isObject(facts?.cause)
    ? rebuild(recorded.cause ?? { name: "Error", message: "" }, facts.cause)
    : undefined;
  if (facts?.apiCallError === true) {
    const cause = branded ?? rebuiltError(recorded).cause;
    const headers = isObject(facts.retryHeaders) ? facts.retryHeaders : undefined;
    return new APICallError({
      message: recorded.message,
      url: "agent-ledger:replay",
      requestBodyValues: {},
      isRetryable: facts.isRetryable === true,
      ...(typeof facts.statusCode === "number" ? { statusCode: facts.statusCode } : {}),
      ...(headers ? { responseHeaders: headers as Record<string, string> } : {}),
      ...(cause ? { cause } : {}),
    });
  }
  // Its name, message, and the code and status the caller branches on (a driver's ECONNRESET,
  // a ledger error's code, a provider client's 429), as recorded.
  const error = rebuiltError(recorded);
  if (branded) error.cause = branded;
  if (!facts) return error;
  // The brands make the SDK's `isInstance` checks (GatewayError, GatewayRateLimitError...)
  // answer as they did for the original, without depending on the package that defined it.
  const brands = Array.isArray(facts.brands) ? facts.brands : [];
  for (const brand of brands)
    if (typeof brand === "string" && brand.startsWith(BRAND_PREFIX))
      Object.defineProperty(error, Symbol.for(brand), { value: true, enumerable: true });
  const fields = error as Error & Record<string, unknown>;
  if (typeof facts.isRetryable === "boolean") fields.isRetryable = facts.isRetryable;
  if (typeof facts.statusCode === "number") fields.statusCode = facts.statusCode;
  if (typeof facts.type === "string") fields.type = facts.type;
  return error;
}

/** An error rebuilt from the ledger, thrown where the original was. */
export function rebuildError(recorded: SerializedError, metadata?: JsonObject): Error {
  const aiSdk = metadata?.aiSdk;
  return rebuild(recorded, isObject(aiSdk) ? aiSdk : undefined);
}

/**
 * How a thrown or streamed value is recorded: an Error as the ledger records errors (with the
 * facts `failureMetadataOf` keeps), any other value (a provider's `{ type, message }` error
 * object) as its plain JSON, so that the replay hands on the same value.
 */
export function encodeThrown(value: unknown): JsonObject {
  if (!(value instanceof Error)) {
    try {
      return { value: toJsonValue(value) };
    } catch {
      // Not JSON (a bigint, a cycle): kept as the ledger keeps any error, by its text.
    }
  }
  const metadata = failureMetadataOf(value);
  return {
    error: normalizeError(value) as unknown as JsonObject,
    ...(metadata ? { metadata } : {}),
  };
}

/** The value `encodeThrown` recorded. */
export function decodeThrown(recorded: JsonValue | undefined): unknown {
  if (!isObject(recorded)) return recorded;
  if ("value" in recorded) return recorded.value;
  const metadata = isObject(recorded.metadata) ? recorded.metadata : undefined;
  return rebuildError(recorded.error as unknown as SerializedError, metadata);
}

const abandonedMarker = Symbol.for("agent-ledger.attempt-abandoned");

/**
 * A recorded call that a person or policy abandoned: answered with this error on replay (the
 * SDK hands it to the model as the call's `tool-error`). Its `code` is stable; check with
 * `AttemptAbandonedError.isInstance(error)`, which works across copies of this package.
 */
export class AttemptAbandonedError extends Error {
  readonly [abandonedMarker] = true;
  readonly code = "attempt-abandoned";
  /** Why the call was abandoned, as recorded (`attempt.abandoned`'s reason). */
  readonly reason: string;
  constructor(what: string, reason: string) {
    super(`${what} was abandoned: ${reason}`);
    this.name = "AttemptAbandonedError";
    this.reason = reason;
  }

  /** True for this error, from any copy of this package. */
  static isInstance(error: unknown): error is AttemptAbandonedError {
    return typeof error === "object" && error !== null && abandonedMarker in error;
  }
}

/**
 * Metadata kept on `tool.failed` when the tool threw something other than an Error (`null`, a
 * string, a plain object): the SDK hands the model `getErrorMessage` of what was thrown
 * ("unknown error" for `null` or `undefined`, a string as it is, an object as its JSON), and
 * the ledger's error (`NonError`, its message the value's text) would give another text on
 * replay, so the next request would not match. Metadata is not redacted (`redact` reaches the
 * payload), so it holds no more of the value than it must: for a string only that it was one
 * (the error's message is the string, redacted as the payload is); `null` and an object as
 * plain JSON (the SDK sends the model that object's JSON, so the next model request holds it
 * too); one that is not plain JSON is left to the ledger's error.
 */
export function toolFailureMetadataOf(thrown: unknown): JsonObject | undefined {
  if (thrown instanceof Error) return undefined;
  if (thrown === undefined) return { aiSdk: { thrown: {} } };
  if (typeof thrown === "string") return { aiSdk: { thrown: { text: true } } };
  try {
    return { aiSdk: { thrown: { value: toJsonValue(thrown) } } };
  } catch {
    return undefined;
  }
}

/** What a recorded tool failure throws again: the value thrown, or the error rebuilt. */
export function rebuildToolFailure(recorded: SerializedError, metadata?: JsonObject): unknown {
  const aiSdk = metadata?.aiSdk;
  const thrown = isObject(aiSdk) ? aiSdk.thrown : undefined;
  if (isObject(thrown)) {
    if (thrown.text === true) return recorded.message;
    return "value" in thrown ? thrown.value : undefined;
  }
  return rebuildError(recorded);
}

/**
 * The text the SDK gave the model for a recorded tool failure (its `getErrorMessage`): the
 * message of an Error; for a value thrown that was not one, "unknown error" for `null` or
 * `undefined`, a string as it is, anything else as its JSON.
 */
export function toolErrorText(recorded: JsonValue | undefined, metadata?: JsonObject): string {
  const aiSdk = metadata?.aiSdk;
  const thrown = isObject(aiSdk) ? aiSdk.thrown : undefined;
  const message = String((isObject(recorded) && recorded.message) || "");
  if (!isObject(thrown) || thrown.text === true) return message;
  const value = thrown.value;
  if (value === undefined || value === null) return "unknown error";
  return typeof value === "string" ? value : JSON.stringify(value);
}
