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
const loneSurrogates = new RegExp(loneSurrogate.source, "g");

/** True for a JSON object (not null, not an array). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** True when `text` holds half of a surrogate pair (text cut by `slice` mid-emoji). */
export function hasLoneSurrogate(text: string): boolean {
  return loneSurrogate.test(text);
}

/**
 * `text` with each lone surrogate replaced by U+FFFD, as a UTF-8 encoder does: what a provider
 * receives of such text. For adapters that record what a framework sent, which the ledger's
 * JSON could not hold as it is.
 */
export function wellFormedText(text: string): string {
  return loneSurrogate.test(text) ? text.replace(loneSurrogates, "\uFFFD") : text;
}

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
 * How deep objects and arrays may nest in a payload. The ledger's walks over a payload
 * (validation, compaction, canonical JSON) recurse, and about 3,500 levels overflowed the stack
 * with a bare RangeError; no agent's payload comes near this many.
 */
export const MAX_JSON_DEPTH = 512;

/**
 * Validates that `value` is plain JSON and returns a deep copy of it, in one pass. Throws
 * `NonSerializableError` naming the path of the first bad value. Rejected: undefined,
 * functions, symbols, bigint, NaN, Infinity, -0, sparse arrays, cycles, Date, Map, Set,
 * class instances, strings with lone surrogates, nesting deeper than MAX_JSON_DEPTH.
 * `options.origin` says where a value the caller did not write came from (e.g. "returned by
 * the redact function"): the error's message names it after the bad value.
 */
export function toPlainJson(value: unknown, path = "$", options?: { origin?: string }): JsonValue {
  const walk: Walk = { root: path, keys: [], ancestors: [], origin: options?.origin };
  try {
    return copy(value, walk);
  } catch (error) {
    throw readFailure(error, walk);
  }
}

/** Validates, as `toPlainJson` does, for a caller that does not keep the copy. */
export function assertPlainJson(value: unknown, path = "$"): asserts value is JsonValue {
  toPlainJson(value, path);
}

/**
 * A getter or a proxy of the caller's that throws while the walk reads it is bad input like any
 * other: `non-serializable` at the path being read (the walk's keys still hold it), not the
 * caller's own error escaping from the store.
 */
function readFailure(error: unknown, walk: Walk): unknown {
  if (error instanceof NonSerializableError) return error;
  return new NonSerializableError(
    pathOf(walk),
    withOrigin(walk, `a value that threw when read (${thrown(error)})`),
  );
}

/** A thrown value in a message: `Name: message` for an Error. */
export function thrown(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

// The path is kept as a stack of keys and only formatted when something is wrong: building a
// path string for every value made validation the slowest part of an append.
interface Walk {
  root: string;
  keys: (string | number)[];
  ancestors: object[];
  origin: string | undefined;
}

function withOrigin(walk: Walk, what: string): string {
  return walk.origin === undefined ? what : `${what} (${walk.origin})`;
}

/** The path the walk is at (and `extra` below it). */
function pathOf(walk: Walk, extra?: string | number): string {
  let path = walk.root;
  for (const key of walk.keys) path = childPath(path, key);
  return extra === undefined ? path : childPath(path, extra);
}

function fail(walk: Walk, what: string, extra?: string | number): never {
  throw new NonSerializableError(pathOf(walk, extra), withOrigin(walk, what));
}

function copy(value: unknown, walk: Walk): JsonValue {
  switch (typeof value) {
    case "string":
      if (loneSurrogate.test(value)) fail(walk, "a string with a lone surrogate");
      return value;
    case "boolean":
      return value;
    case "number":
      if (!Number.isFinite(value) || Object.is(value, -0)) fail(walk, describe(value));
      return value;
    case "object": {
      if (value === null) return null;
      if (walk.ancestors.length >= MAX_JSON_DEPTH)
        fail(walk, `a value nested deeper than ${MAX_JSON_DEPTH} levels`);
      if (walk.ancestors.includes(value)) fail(walk, "a cycle");
      walk.ancestors.push(value);
      if (Array.isArray(value)) {
        const out: JsonValue[] = new Array(value.length);
        for (let index = 0; index < value.length; index++) {
          if (!(index in value)) fail(walk, "a hole in a sparse array", index);
          walk.keys.push(index);
          out[index] = copy(value[index], walk);
          walk.keys.pop();
        }
        walk.ancestors.pop();
        return out;
      }
      const proto = Object.getPrototypeOf(value);
      if (proto !== Object.prototype && proto !== null) fail(walk, describe(value));
      if (Object.getOwnPropertySymbols(value).length > 0) fail(walk, "an object with symbol keys");
      const out: JsonObject = {};
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        walk.keys.push(key);
        if (loneSurrogate.test(key)) fail(walk, "a key with a lone surrogate");
        const item = copy((value as Record<string, unknown>)[key], walk);
        walk.keys.pop();
        // __proto__ as an own data key must stay data, never a prototype change.
        if (key === "__proto__") {
          Object.defineProperty(out, key, {
            value: item,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        } else out[key] = item;
      }
      walk.ancestors.pop();
      return out;
    }
    default:
      return fail(walk, describe(value));
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
  /** The error's `code`: a text (`ECONNRESET`, a ledger error's) or a number (a gRPC status, a driver's). */
  code?: string | number;
  /** An HTTP status the error carries (its `status`, or the AI SDK's `statusCode`): 429, 503. */
  status?: number;
  stack?: string;
  cause?: SerializedError;
};

/**
 * Normalises anything thrown into `{ name, message, code?, status?, stack?, cause? }` so it can
 * be recorded. A `code` is kept when it is a text or a finite number; `status` is the error's
 * `status` or `statusCode` when it is an integer (a provider's 429 says to wait and retry). Non-Error values become `{ name: "NonError", message }`, the message being the
 * value itself for a string, else its JSON text (or `String(value)` when it has none). A lone
 * surrogate in its texts (a message quoting text cut mid-emoji) becomes U+FFFD: refused, it
 * would leave the call that failed unresolved and its run open.
 */
export function normalizeError(
  error: unknown,
  options: { stack?: boolean } = {},
  depth = 0,
): SerializedError {
  const withStack = options.stack ?? true;
  // Total: the failure is recorded whatever the error's fields do when read (a getter that
  // throws, a message with no text form, a revoked proxy); what could not be read says so.
  let errorLike: boolean;
  try {
    errorLike =
      error instanceof Error ||
      (typeof error === "object" && error !== null && "message" in error && "name" in error);
  } catch (readError) {
    return { name: "NonError", message: unreadable(readError) };
  }
  if (errorLike) {
    const source = error as Error & { code?: unknown; status?: unknown; statusCode?: unknown };
    const out: SerializedError = {
      name: fieldText(() => source.name),
      message: fieldText(() => source.message),
    };
    const code = fieldValue(() => source.code);
    if (typeof code === "string") out.code = wellFormedText(code);
    else if (typeof code === "number" && Number.isFinite(code)) out.code = code;
    const status = [fieldValue(() => source.status), fieldValue(() => source.statusCode)].find(
      (value) => Number.isInteger(value),
    );
    if (status !== undefined) out.status = status as number;
    const stack = withStack ? fieldValue(() => source.stack) : undefined;
    if (typeof stack === "string") out.stack = wellFormedText(stack);
    const cause = fieldValue(() => source.cause);
    if (cause !== undefined && depth < 4) out.cause = normalizeError(cause, options, depth + 1);
    return out;
  }
  let message: string;
  try {
    message = typeof error === "string" ? error : (JSON.stringify(error) ?? String(error));
  } catch {
    message = safeString(error);
  }
  return { name: "NonError", message: wellFormedText(message) };
}

/** A field of an error read as text, or what reading it threw. */
function fieldText(read: () => unknown): string {
  try {
    return wellFormedText(safeString(read()));
  } catch (readError) {
    return unreadable(readError);
  }
}

/** A field of an error, or undefined if reading it throws. */
function fieldValue(read: () => unknown): unknown {
  try {
    return read();
  } catch {
    return undefined;
  }
}

/** "[unreadable: TypeError: ...]": what reading a thrown value's field threw. */
function unreadable(readError: unknown): string {
  try {
    return wellFormedText(`[unreadable: ${thrown(readError)}]`);
  } catch {
    return "[unreadable]";
  }
}

/** `String(value)`, or the `[object Tag]` form for objects that cannot be converted (null prototype). */
function safeString(value: unknown): string {
  try {
    return String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}
