import {
  type JsonObject,
  type JsonValue,
  wellFormedText,
  withoutCredentialKeys,
} from "@agent-ledger/core";
import { type BaseMessage, isBaseMessage } from "@langchain/core/messages";
import { isCredentialKey } from "./credential-key.js";

// Keys never written to the ledger: credentials (isCredentialKey), and values that differ on
// every execution (which would break request hashing on resume).
const VOLATILE_KEYS = new Set(["signal", "callbacks", "runId", "run_id", "timeout"]);

/**
 * A message as plain JSON: `message.toDict()`'s fields, without its random `id`. Each value is
 * the message's own, made JSON by `toJsonValue` as any other value: `toDict()` passes values
 * through LangChain's serializer, which turns a Date or a Map into `{}` and wraps an object
 * holding an `lc` key in `__lc_escaped__` (a tool's artifact would come back from the ledger
 * changed).
 */
export function messageToJson(message: BaseMessage): JsonObject {
  const stored = message.toDict() as unknown as { type: string; data: Record<string, unknown> };
  const own = message as unknown as Record<string, unknown>;
  const kwargs = (message as { lc_kwargs?: Record<string, unknown> }).lc_kwargs ?? {};
  const data: JsonObject = {};
  for (const [key, serialized] of Object.entries(stored.data)) {
    // ids are random per call; chunk fragments duplicate `tool_calls`.
    if (key === "id" || key === "tool_call_chunks") continue;
    // Where toDict() takes each value from (Serializable.toJSON); a key it renamed keeps its copy.
    const value = key in own ? own[key] : key in kwargs ? kwargs[key] : serialized;
    if (value === undefined || typeof value === "function" || typeof value === "symbol") continue;
    data[wellFormedText(key)] = toJsonValue(value);
  }
  return { type: stored.type, data };
}

/**
 * Best-effort conversion of LangChain values (messages, serializable objects, arrays, records)
 * to plain JSON: messages become `toDict()` without ids, `undefined`/functions are dropped,
 * non-finite numbers become null, lone surrogates U+FFFD, other class instances their
 * `toJSON()` or own fields.
 */
export function toJsonValue(value: unknown, seen: WeakSet<object> = new WeakSet()): JsonValue {
  if (value === null || value === undefined) return null;
  switch (typeof value) {
    case "string":
      return wellFormedText(value);
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? (Object.is(value, -0) ? 0 : value) : null;
    case "bigint":
      return value.toString();
    case "function":
    case "symbol":
      return null;
    default:
      break;
  }
  const object = value as object;
  if (seen.has(object)) return "[circular]";
  seen.add(object);
  try {
    if (isBaseMessage(object)) return messageToJson(object);
    if (Array.isArray(object)) return object.map((item) => toJsonValue(item, seen));
    if (object instanceof Date) return object.toISOString();
    if (object instanceof Uint8Array) return Buffer.from(object).toString("base64");
    if (object instanceof Error)
      return { name: object.name, message: object.message } satisfies JsonObject;
    if (object instanceof Map)
      return toJsonValue(Object.fromEntries(object as Map<unknown, unknown>), seen);
    if (object instanceof Set) return toJsonValue([...(object as Set<unknown>)], seen);
    const prototype = Object.getPrototypeOf(object);
    if (prototype !== Object.prototype && prototype !== null) {
      const withJson = object as { toJSON?: () => unknown };
      if (typeof withJson.toJSON === "function") {
        const json = withJson.toJSON();
        if (json !== object) return toJsonValue(json, seen);
      }
    }
    const result: JsonObject = {};
    for (const [key, item] of Object.entries(object)) {
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      result[wellFormedText(key)] = toJsonValue(item, seen);
    }
    return result;
  } finally {
    seen.delete(object);
  }
}

/**
 * Invocation parameters without credentials, headers or per-call values, at any depth and in
 * lists too (an MCP server's `authorization_token`, a remote tool's `headers`), and with the
 * password of every URL masked (as core's `withoutCredentialKeys` masks a string: a proxy, a
 * DSN).
 */
export function safeParams(params: unknown): JsonObject {
  if (params === null || typeof params !== "object" || Array.isArray(params)) return {};
  return withoutCredentialValues(params, new WeakSet()) as JsonObject;
}

/** `value` as JSON without the keys `safeParams` leaves out, at any depth. */
function withoutCredentialValues(value: unknown, seen: WeakSet<object>): JsonValue {
  if (value === null || typeof value !== "object") {
    const json = toJsonValue(value);
    return typeof json === "string" ? withoutCredentialKeys(json) : json;
  }
  if (isBaseMessage(value)) return toJsonValue(value);
  if (seen.has(value)) return "[circular]";
  const prototype = Object.getPrototypeOf(value);
  // Another kind of object (a Date, a Map, a class's instance) is filtered as its JSON.
  if (!Array.isArray(value) && prototype !== Object.prototype && prototype !== null)
    return withoutCredentialValues(toJsonValue(value), seen);
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => withoutCredentialValues(item, seen));
    const result: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || isCredentialKey(key) || VOLATILE_KEYS.has(key)) continue;
      result[wellFormedText(key)] = withoutCredentialValues(item, seen);
    }
    return result;
  } finally {
    seen.delete(value);
  }
}

/** Parses a JSON string tool input; anything else is kept as a string. */
export function parseToolInput(input: unknown): JsonValue {
  if (typeof input !== "string") return toJsonValue(input);
  try {
    return toJsonValue(JSON.parse(input));
  } catch {
    return input;
  }
}

/** True for a plain object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
