import { type JsonValue, NonSerializableError } from "@agent-ledger/core";

/** Base64 of bytes (how binary content is kept in a plain-JSON payload). */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * Converts an SDK value to plain JSON the way it would go over the wire: undefined properties
 * are dropped, Dates become ISO strings, URLs their href, bytes base64. Deterministic, so the
 * same request re-executed after a crash hashes the same.
 *
 * Same result as `JSON.parse(JSON.stringify(value, bytesAsBase64))`, computed by one walk
 * that keeps the caller's strings (no copy of every message text on every call: a long
 * conversation re-sends its history each turn, and the recorder recognises strings it has
 * already stored by identity).
 */
export function toJsonValue(value: unknown, path = "$"): JsonValue {
  try {
    return convert(value, "", new Set()) ?? null;
  } catch (error) {
    if (error instanceof NonSerializableError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new NonSerializableError(path, `not JSON-serializable (${reason})`);
  }
}

function convert(input: unknown, key: string, stack: Set<object>): JsonValue | undefined {
  let value = input;
  // JSON.stringify order: toJSON first, then the replacer (bytes as base64), then the type.
  if (
    value !== null &&
    (typeof value === "object" || typeof value === "bigint") &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  )
    value = (value as { toJSON(key: string): unknown }).toJSON(key);
  if (value instanceof Uint8Array) return toBase64(value);
  switch (typeof value) {
    case "string":
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
    case "bigint":
      throw new TypeError("Do not know how to serialize a BigInt");
  }
  if (value === null) return null;
  const object = value as object;
  if (object instanceof Number || object instanceof String || object instanceof Boolean)
    return convert(object.valueOf(), key, stack);
  if (stack.has(object)) throw new TypeError("Converting circular structure to JSON");
  stack.add(object);
  try {
    if (Array.isArray(object)) {
      const out: JsonValue[] = [];
      for (let index = 0; index < object.length; index++)
        out.push(convert(object[index], String(index), stack) ?? null);
      return out;
    }
    const out: { [key: string]: JsonValue } = {};
    for (const name of Object.keys(object)) {
      const item = convert((object as Record<string, unknown>)[name], name, stack);
      if (item !== undefined) out[name] = item;
    }
    return out;
  } finally {
    stack.delete(object);
  }
}
