import {
  childPath,
  type JsonValue,
  NonSerializableError,
  wellFormedText,
} from "@agent-ledger/core";

/** Base64 of bytes (how binary content is kept in a plain-JSON payload). */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
}

/**
 * Converts an SDK value to plain JSON the way it would go over the wire: undefined properties
 * are dropped, Dates become ISO strings, URLs their href, bytes (a Buffer, an ArrayBuffer too) base64, a lone surrogate in a
 * string or key U+FFFD. Deterministic, so the
 * same request re-executed after a crash hashes the same.
 *
 * Same result as `JSON.parse(JSON.stringify(value, bytesAsBase64))` but for a Buffer and an
 * ArrayBuffer (base64 here, the Buffer's toJSON byte list and `{}` there) and lone surrogates
 * (U+FFFD here, kept as they are there; two keys that differ only by one become one, the last
 * wins), computed by one walk
 * that keeps the caller's strings (no copy of every message text on every call: a long
 * conversation re-sends its history each turn, and the recorder recognises strings it has
 * already stored by identity).
 */
export function toJsonValue(value: unknown, path = "$"): JsonValue {
  return toJson(value, path, undefined);
}

/** Where a value held bytes: the keys from the root down to each `Uint8Array`. */
export type BytesPath = (string | number)[];

/**
 * `toJsonValue`, and the path of every `Uint8Array` or `ArrayBuffer` it turned into base64
 * (`buffers`, `arrayBuffers`: of those that were a Node `Buffer`, an `ArrayBuffer`), so that a
 * replay can hand back bytes of the same kind where the original value had them.
 */
export function toJsonValueAndBytes(
  value: unknown,
  path = "$",
): { json: JsonValue; bytes: BytesPath[] } & BytesPaths {
  const trail: BytesTrail = { keys: [], found: [], buffers: [], arrayBuffers: [] };
  const json = toJson(value, path, trail);
  return { json, bytes: trail.found, buffers: trail.buffers, arrayBuffers: trail.arrayBuffers };
}

/** The keys of the walk so far, and where bytes were met (and which were Buffers, ArrayBuffers). */
interface BytesTrail extends BytesPaths {
  keys: (string | number)[];
  found: BytesPath[];
}

/** Where a value held bytes that were not a plain `Uint8Array`. */
export interface BytesPaths {
  /** Node `Buffer`s. */
  buffers: BytesPath[];
  /** `ArrayBuffer`s. */
  arrayBuffers: BytesPath[];
}

function toJson(value: unknown, path: string, trail: BytesTrail | undefined): JsonValue {
  try {
    return convert(value, "", new Set(), trail) ?? null;
  } catch (error) {
    if (!(error instanceof Unconvertible)) {
      // A getter that throws, a proxy...: what JSON.stringify would have thrown.
      throw new NonSerializableError(path, `not JSON-serializable (${describeError(error)})`);
    }
    // The path is built only now, from the keys collected on the way out of the walk.
    let at = path;
    for (let index = error.keys.length - 1; index >= 0; index--)
      at = childPath(at, error.keys[index] as string | number);
    throw new NonSerializableError(at, error.what);
  }
}

/** Thrown inside the walk; each level adds its key on the way out (most nested first). */
class Unconvertible {
  readonly keys: (string | number)[] = [];
  constructor(readonly what: string) {}
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function convert(
  input: unknown,
  key: string,
  stack: Set<object>,
  trail: BytesTrail | undefined,
): JsonValue | undefined {
  // Bytes first, a Buffer too: its toJSON would give `{ type: "Buffer", data: [...] }`, a number
  // per byte, where a provider sends base64, and a replay would hand back no Buffer. And an
  // ArrayBuffer (fetch's arrayBuffer()), which JSON.stringify gives as `{}`, the bytes lost.
  if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
    if (trail) {
      trail.found.push([...trail.keys]);
      if (Buffer.isBuffer(input)) trail.buffers.push([...trail.keys]);
      if (input instanceof ArrayBuffer) trail.arrayBuffers.push([...trail.keys]);
    }
    return toBase64(input instanceof ArrayBuffer ? new Uint8Array(input) : input);
  }
  let value = input;
  // JSON.stringify order: toJSON first, then the replacer (bytes as base64), then the type.
  if (
    value !== null &&
    (typeof value === "object" || typeof value === "bigint") &&
    typeof (value as { toJSON?: unknown }).toJSON === "function"
  )
    try {
      value = (value as { toJSON(key: string): unknown }).toJSON(key);
    } catch (error) {
      throw new Unconvertible(`a value whose toJSON throws (${describeError(error)})`);
    }
  if (value instanceof Uint8Array) {
    trail?.found.push([...trail.keys]);
    return toBase64(value);
  }
  switch (typeof value) {
    case "string":
      // Half an emoji (text cut with slice()) is no plain JSON: U+FFFD, as UTF-8 would send it.
      return wellFormedText(value);
    case "boolean":
      return value;
    case "number":
      return Number.isFinite(value) ? (value === 0 ? 0 : value) : null;
    case "undefined":
    case "function":
    case "symbol":
      return undefined;
    case "bigint":
      throw new Unconvertible("a bigint");
  }
  if (value === null) return null;
  const object = value as object;
  if (object instanceof Number || object instanceof String || object instanceof Boolean)
    return convert(object.valueOf(), key, stack, trail);
  if (stack.has(object)) throw new Unconvertible("a circular reference");
  stack.add(object);
  try {
    if (Array.isArray(object)) {
      const out: JsonValue[] = [];
      for (let index = 0; index < object.length; index++) {
        trail?.keys.push(index);
        try {
          out.push(convert(object[index], String(index), stack, trail) ?? null);
        } catch (error) {
          if (error instanceof Unconvertible) error.keys.push(index);
          throw error;
        }
        trail?.keys.pop();
      }
      return out;
    }
    const out: { [key: string]: JsonValue } = {};
    for (const name of Object.keys(object)) {
      trail?.keys.push(name);
      try {
        const item = convert((object as Record<string, unknown>)[name], name, stack, trail);
        if (item !== undefined) out[wellFormedText(name)] = item;
      } catch (error) {
        if (error instanceof Unconvertible) error.keys.push(name);
        throw error;
      }
      trail?.keys.pop();
    }
    return out;
  } finally {
    stack.delete(object);
  }
}
