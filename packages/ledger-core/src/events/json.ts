import { NonSerializableError } from "./errors.js";

/** A plain JSON value: what every payload, metadata and export is made of. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

const identifier = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
// A UTF-16 surrogate not paired with its other half cannot be encoded as UTF-8 or hashed
// canonically (RFC 8785 requires well-formed strings).
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Appends a property or index to a JSON path (`$.a`, `$["b c"]`, `$[3]`). */
export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return identifier.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function describe(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "a function";
  if (typeof value === "symbol") return "a symbol";
  if (typeof value === "bigint") return "a bigint";
  if (typeof value === "number") return Object.is(value, -0) ? "-0" : String(value);
  if (value instanceof Date) return "a Date";
  if (value instanceof Map) return "a Map";
  if (value instanceof Set) return "a Set";
  const name = (value as object).constructor?.name;
  return name ? `an instance of ${name}` : "an exotic object";
}

/**
 * Validates that `value` is plain JSON and returns a deep copy of it, in one pass. Throws
 * `NonSerializableError` naming the path of the first bad value. Rejected: undefined,
 * functions, symbols, bigint, NaN, Infinity, -0, sparse arrays, cycles, Date, Map, Set,
 * class instances, strings with lone surrogates.
 */
export function toPlainJson(value: unknown, path = "$"): JsonValue {
  return copy(value, path, []);
}

/** Validates without keeping the copy. */
export function assertPlainJson(value: unknown, path = "$"): asserts value is JsonValue {
  copy(value, path, []);
}

function copy(value: unknown, path: string, ancestors: object[]): JsonValue {
  switch (typeof value) {
    case "string":
      if (loneSurrogate.test(value))
        throw new NonSerializableError(path, "a string with a lone surrogate");
      return value;
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value) || Object.is(value, -0)) {
        throw new NonSerializableError(path, describe(value));
      }
      return value;
    case "object": {
      if (value === null) return null;
      if (ancestors.includes(value)) throw new NonSerializableError(path, "a cycle");
      ancestors.push(value);
      try {
        if (Array.isArray(value)) {
          const out: JsonValue[] = new Array(value.length);
          for (let index = 0; index < value.length; index++) {
            if (!(index in value))
              throw new NonSerializableError(childPath(path, index), "a hole in a sparse array");
            out[index] = copy(value[index], childPath(path, index), ancestors);
          }
          return out;
        }
        const proto = Object.getPrototypeOf(value);
        if (proto !== Object.prototype && proto !== null) {
          throw new NonSerializableError(path, describe(value));
        }
        if (Object.getOwnPropertySymbols(value).length > 0) {
          throw new NonSerializableError(path, "an object with symbol keys");
        }
        const out: JsonObject = {};
        for (const key of Object.keys(value)) {
          const keyPath = childPath(path, key);
          if (loneSurrogate.test(key))
            throw new NonSerializableError(keyPath, "a key with a lone surrogate");
          const item = copy((value as Record<string, unknown>)[key], keyPath, ancestors);
          // __proto__ as an own data key must stay data, never a prototype change.
          if (key === "__proto__")
            Object.defineProperty(out, key, {
              value: item,
              enumerable: true,
              writable: true,
              configurable: true,
            });
          else out[key] = item;
        }
        return out;
      } finally {
        ancestors.pop();
      }
    }
    default:
      throw new NonSerializableError(path, describe(value));
  }
}

/** Deep copy of a value already known to be plain JSON (no checks: fast path for stores). */
export function cloneJson<T extends JsonValue | undefined>(value: T): T {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((item) => cloneJson(item)) as T;
  const out: JsonObject = {};
  for (const key of Object.keys(value)) {
    const item = cloneJson((value as JsonObject)[key]);
    if (key === "__proto__")
      Object.defineProperty(out, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    else out[key] = item as JsonValue;
  }
  return out as T;
}

/** The JSON shape an `Error` is recorded as. */
export type SerializedError = {
  name: string;
  message: string;
  code?: string;
  stack?: string;
  cause?: SerializedError;
};

/**
 * Normalises anything thrown into `{ name, message, code?, stack?, cause? }` so it can be
 * recorded. Non-Error values become `{ name: "NonError", message }` (plain JSON values are
 * kept as the cause).
 */
export function normalizeError(
  error: unknown,
  options: { stack?: boolean } = {},
  depth = 0,
): SerializedError {
  const withStack = options.stack ?? true;
  if (
    error instanceof Error ||
    (typeof error === "object" && error !== null && "message" in error && "name" in error)
  ) {
    const source = error as Error & { code?: unknown };
    const out: SerializedError = { name: String(source.name), message: String(source.message) };
    if (typeof source.code === "string") out.code = source.code;
    if (withStack && typeof source.stack === "string") out.stack = source.stack;
    if (source.cause !== undefined && depth < 4)
      out.cause = normalizeError(source.cause, options, depth + 1);
    return out;
  }
  let message: string;
  try {
    message = typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    message = String(error);
  }
  return { name: "NonError", message };
}
