import { InvalidArgumentError } from "../events/errors.js";
import { isJsonObject as isObject, type JsonValue, toPlainJson } from "../events/json.js";

/** Context handed to a redaction function. */
export interface RedactContext {
  /** Event type being recorded, e.g. `model.requested`. */
  type: string;
  /**
   * `"metadata"` when the function is called with the event's metadata (`{ metadata }`, see
   * `redactMetadata`); absent when it is called with the event's payload.
   */
  part?: "metadata";
}

/**
 * What the recorder removes before hashing and persisting: a list of dotted paths into the
 * event payload (`request.headers.authorization`; `*` matches one key, `**` any depth, so
 * `**.apiKey` removes every `apiKey`) and into its metadata (`metadata.langchain.tags`), or a
 * function returning the value to keep, called for the payload and for the metadata
 * (`RedactContext.part`).
 */
export type Redaction =
  | readonly string[]
  | ((payload: JsonValue, context: RedactContext) => JsonValue);

export const REDACTED = "[redacted]";

/**
 * Credentials the adapters know of, removed from model requests by default (adapters pass
 * this list unless the user gives their own `redact`): authorization and API-key headers, and
 * API keys or tokens in model settings and provider options, at any depth of the request.
 */
export const DEFAULT_CREDENTIAL_PATHS: readonly string[] = [
  "request.**.authorization",
  "request.**.Authorization",
  "request.**.x-api-key",
  "request.**.X-Api-Key",
  "request.**.api-key",
  "request.**.apiKey",
  "request.**.api_key",
  "request.**.openAIApiKey",
  "request.**.anthropicApiKey",
  "request.**.token",
  "request.**.accessToken",
  "request.**.access_token",
  "request.**.secret",
  "request.**.password",
];

/**
 * Checks a `redact` option and returns it (an array copied, so later changes by the caller do
 * not change what is removed). A redaction that is not what it looks like would let secrets
 * into an append-only, hash-chained ledger without a word: a single string
 * (`redact: "request.apiKey"`) would be walked character by character and match nothing, an
 * empty path or segment (`"request..apiKey"`) matches nothing. Each is `invalid-argument`
 * naming the bad value, when the recorder is made, before anything is recorded.
 */
export function validateRedaction(value: unknown, path: string): Redaction | undefined {
  if (value === undefined || typeof value === "function") return value as Redaction | undefined;
  if (!Array.isArray(value))
    throw new InvalidArgumentError(
      path,
      `redact must be an array of paths (e.g. ["request.headers.authorization", "**.apiKey"]) or a function, got ${typeof value === "string" ? "a string" : typeof value}`,
    );
  const paths: string[] = [];
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (typeof item !== "string" || item.split(".").some((segment) => segment.length === 0))
      throw new InvalidArgumentError(
        `${path}[${index}]`,
        "a redaction path is a string of non-empty segments separated by dots",
      );
    paths.push(item);
  }
  return paths;
}

/** Applies a redaction to a payload (never mutates the input). */
export function applyRedaction(
  payload: JsonValue,
  redaction: Redaction | undefined,
  context: RedactContext,
): JsonValue {
  if (redaction === undefined) return payload;
  if (typeof redaction === "function") return redaction(payload, context);
  const plan = planOf(redaction);
  let out = payload;
  for (const segments of plan.paths) out = redactPath(out, segments);
  for (const { prefix, keys } of plan.deep) out = redactAt(out, prefix, keys);
  return out;
}

/**
 * Whether a redaction can change an event's metadata (`{ metadata }`): a function always may, a
 * list of paths only by a path starting `metadata.`, `*.` or `**.`.
 */
export function reachesMetadata(redaction: Redaction): boolean {
  return typeof redaction === "function" || planOf(redaction).reachesMetadata;
}

/**
 * A payload redacted as the recorder records it. A list of paths only puts `[redacted]` in
 * place of values, so its result is plain JSON of the same shape. A function's result is the
 * caller's code: it is hashed and stored like the caller's own payload, so it is checked like
 * it (and copied: the function may hand back objects it keeps), `non-serializable` at the path
 * of the bad value in what it returned, saying so. Returning nothing, or no object for a
 * payload that is one (`shape: "object"`: a call's `{ request }`, a failure's `{ error }`), is
 * `invalid-argument`. Either way nothing is written.
 */
export function redactPayload(
  payload: JsonValue,
  redaction: Redaction,
  context: RedactContext,
  shape: "object" | "any",
): JsonValue {
  if (typeof redaction !== "function") return applyRedaction(payload, redaction, context);
  const part =
    context.part === "metadata"
      ? `the metadata of a ${context.type} event`
      : `a ${context.type} payload`;
  let redacted: unknown;
  try {
    redacted = redaction(payload, context);
  } catch (error) {
    // The call is not made: say so as every refusal does, with the function's own error kept.
    throw new InvalidArgumentError(
      "$.redact",
      `the redact function threw for ${part}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  }
  const origin = `returned by the redact function for ${part}`;
  if (redacted === undefined)
    throw new InvalidArgumentError(
      "$.redact",
      `the redact function returned nothing for ${part}: return the value to keep`,
    );
  if (shape === "object" && !isObject(redacted))
    throw new InvalidArgumentError(
      "$.redact",
      `the redact function must return ${part} as an object (${Object.keys(payload as object).join(", ")}), got ${Array.isArray(redacted) ? "an array" : redacted === null ? "null" : typeof redacted}`,
    );
  return toPlainJson(redacted, "$", { origin });
}

/**
 * A list of paths made ready to apply: each split into segments, and the paths
 * `prefix.**.key` with the same plain prefix gathered into one walk with a set of keys (same
 * result as one walk per path; DEFAULT_CREDENTIAL_PATHS has fourteen of them). The other
 * paths are applied first, in their order, then each gathered walk.
 */
interface RedactionPlan {
  /** The paths it was made from, to tell a list changed since. */
  source: readonly string[];
  paths: string[][];
  deep: { prefix: string[]; keys: Set<string> }[];
  /**
   * Whether a path can reach `{ metadata }`: its first segment `metadata`, `*` or `**`. Most
   * lists cannot (DEFAULT_CREDENTIAL_PATHS are all `request.**`), and the metadata of every
   * recorded event is skipped for them rather than walked to no effect.
   */
  reachesMetadata: boolean;
}

/**
 * Plans by the list they were made from. The paths run on every recorded call (the adapters
 * redact each model request), and planning fourteen paths took as long as walking a request.
 */
const plans = new WeakMap<readonly string[], RedactionPlan>();

function planOf(redaction: readonly string[]): RedactionPlan {
  const known = plans.get(redaction);
  if (known !== undefined && sameList(known.source, redaction)) return known;
  const plan = makePlan(redaction);
  plans.set(redaction, plan);
  return plan;
}

/** Whether a list still holds what it held when its plan was made (a caller may edit it). */
function sameList(x: readonly string[], y: readonly string[]): boolean {
  if (x.length !== y.length) return false;
  for (let index = 0; index < x.length; index++) if (x[index] !== y[index]) return false;
  return true;
}

function makePlan(redaction: readonly string[]): RedactionPlan {
  const paths: string[][] = [];
  const deep = new Map<string, { prefix: string[]; keys: Set<string> }>();
  for (const path of redaction) {
    const segments = path.split(".");
    const key = segments[segments.length - 1] as string;
    const prefix = segments.slice(0, -2);
    if (
      segments.length >= 2 &&
      segments[segments.length - 2] === "**" &&
      key !== "*" &&
      key !== "**" &&
      !prefix.some((segment) => segment === "*" || segment === "**")
    ) {
      const joined = prefix.join(".");
      let group = deep.get(joined);
      if (!group) {
        group = { prefix, keys: new Set() };
        deep.set(joined, group);
      }
      group.keys.add(key);
    } else paths.push(segments);
  }
  const reachesMetadata = redaction.some((path) => /^(metadata|\*|\*\*)(\.|$)/.test(path));
  return { source: [...redaction], paths, deep: [...deep.values()], reachesMetadata };
}

function redactAt(value: JsonValue, prefix: string[], keys: Set<string>): JsonValue {
  if (prefix.length === 0) return redactKeysDeep(value, keys);
  if (value === null || typeof value !== "object") return value;
  const [head, ...rest] = prefix as [string, ...string[]];
  if (Array.isArray(value)) {
    const index = Number(head);
    if (!Number.isInteger(index) || index < 0 || index >= value.length) return value;
    const next = redactAt(value[index] as JsonValue, rest, keys);
    if (next === value[index]) return value;
    const copy = value.slice();
    copy[index] = next;
    return copy;
  }
  if (!Object.hasOwn(value, head)) return value;
  const next = redactAt(value[head] as JsonValue, rest, keys);
  return next === value[head] ? value : { ...value, [head]: next };
}

function redactKeysDeep(value: JsonValue, keys: Set<string>): JsonValue {
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return mapChildren(value, (child) => redactKeysDeep(child, keys));
  let copy: { [key: string]: JsonValue } | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key] as JsonValue;
    const next = keys.has(key) ? REDACTED : redactKeysDeep(item, keys);
    if (next !== item) {
      copy ??= { ...value };
      copy[key] = next;
    }
  }
  return copy ?? value;
}

// Both helpers return the input itself when nothing under it matched, so redacting a long
// conversation allocates nothing but the changed path (the paths run on every model call).
function redactPath(value: JsonValue, segments: string[]): JsonValue {
  if (segments.length === 0) return REDACTED;
  if (value === null || typeof value !== "object") return value;
  const [head, ...rest] = segments as [string, ...string[]];
  if (head === "**") {
    // Apply the rest here, and recurse into every child with the same `**` pattern.
    let here = rest.length === 0 ? REDACTED : redactPath(value, rest);
    if (here !== null && typeof here === "object")
      here = mapChildren(here, (child) => redactPath(child, segments));
    return here;
  }
  if (Array.isArray(value)) {
    if (head === "*") return mapChildren(value, (item) => redactPath(item, rest));
    const index = Number(head);
    if (!Number.isInteger(index) || index < 0 || index >= value.length) return value;
    const next = redactPath(value[index] as JsonValue, rest);
    if (next === value[index]) return value;
    const copy = value.slice();
    copy[index] = next;
    return copy;
  }
  if (head === "*") return mapChildren(value, (child) => redactPath(child, rest));
  if (!Object.hasOwn(value, head)) return value;
  const next = redactPath(value[head] as JsonValue, rest);
  if (next === value[head]) return value;
  return { ...value, [head]: next };
}

function mapChildren(value: JsonValue, map: (child: JsonValue) => JsonValue): JsonValue {
  if (Array.isArray(value)) {
    let copy: JsonValue[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item = value[index] as JsonValue;
      const next = map(item);
      if (next !== item) {
        copy ??= value.slice();
        copy[index] = next;
      }
    }
    return copy ?? value;
  }
  if (value === null || typeof value !== "object") return value;
  let copy: { [key: string]: JsonValue } | undefined;
  for (const key of Object.keys(value)) {
    const item = value[key] as JsonValue;
    const next = map(item);
    if (next !== item) {
      copy ??= { ...value };
      copy[key] = next;
    }
  }
  return copy ?? value;
}

/**
 * A redacted failure's error with the text the redaction removed taken out of its stacks too.
 * A stack repeats its error's message (V8: `Error: <message>\n    at ...`) and a custom stack may
 * quote a cause, so a redaction of `error.message` alone would leave the secret in
 * `error.stack`. The rule, for the error and each of its causes: every string the redaction
 * changed or removed in that error (its fields and its causes', stacks aside) is replaced by
 * `[redacted]` wherever its stack, if the redaction left it as it was, contains it. The frames
 * stay. `before` is the failure's error as normalised, `after` the same after redaction.
 */
export function redactErrorStacks(before: JsonValue, after: JsonValue): JsonValue {
  if (!isObject(before) || !isObject(after) || before === after) return after;
  let out = after;
  if (before.cause !== undefined && after.cause !== undefined) {
    const cause = redactErrorStacks(before.cause, after.cause);
    if (cause !== after.cause) out = { ...out, cause };
  }
  const stack = after.stack;
  if (typeof stack !== "string" || stack !== before.stack) return out;
  const removed = new Set<string>();
  for (const key of Object.keys(before))
    if (key !== "stack") removedStrings(before[key] as JsonValue, after[key], removed);
  // Longest first: a removed string that contains another is replaced whole.
  let redacted = stack;
  for (const text of [...removed].sort((x, y) => y.length - x.length))
    redacted = redacted.replaceAll(text, REDACTED);
  if (typeof before.message === "string" && before.message !== after.message)
    redacted = withoutHeader(redacted, after.name);
  return redacted === stack ? out : { ...out, stack: redacted };
}

/**
 * A stack whose error's message the redaction changed, its first lines (before the frames) put
 * as `<name>: [redacted]`. V8 writes them when the stack is first read: read before the message
 * was changed (a logger, then a wrapper adding what it was doing, LangChain's troubleshooting
 * URL), they hold the message as it was then, which is not the one the redaction removed.
 */
function withoutHeader(stack: string, name: JsonValue | undefined): string {
  const header = `${typeof name === "string" ? name : "Error"}: ${REDACTED}`;
  const frames = /\n\s+at /.exec(stack);
  if (frames === null) return header;
  return stack.slice(0, frames.index) === header ? stack : header + stack.slice(frames.index);
}

/** Adds to `removed` the non-empty strings of `before` that `after` no longer holds there. */
function removedStrings(before: JsonValue, after: JsonValue | undefined, removed: Set<string>) {
  if (before === after) return;
  if (typeof before === "string") {
    if (before.length > 0) removed.add(before);
    return;
  }
  if (before === null || typeof before !== "object") return;
  const sameShape =
    after !== null && typeof after === "object" && Array.isArray(after) === Array.isArray(before);
  for (const key of Object.keys(before)) {
    if (key === "stack") continue;
    const next = sameShape ? (after as { [key: string]: JsonValue })[key] : undefined;
    removedStrings((before as { [key: string]: JsonValue })[key] as JsonValue, next, removed);
  }
}
