import type { JsonValue } from "../events/json.js";

/** Context handed to a redaction function. */
export interface RedactContext {
  /** Event type being recorded, e.g. `model.requested`. */
  type: string;
}

/**
 * What the recorder removes before hashing and persisting: a list of dotted paths into the
 * event payload (`request.headers.authorization`; `*` matches one key, `**` any depth, so
 * `**.apiKey` removes every `apiKey`), or a function returning the value to keep.
 */
export type Redaction = string[] | ((payload: JsonValue, context: RedactContext) => JsonValue);

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

/** Applies a redaction to a payload (never mutates the input). */
export function applyRedaction(
  payload: JsonValue,
  redaction: Redaction | undefined,
  context: RedactContext,
): JsonValue {
  if (redaction === undefined) return payload;
  if (typeof redaction === "function") return redaction(payload, context);
  let out = payload;
  for (const path of redaction) out = redactPath(out, path.split("."));
  return out;
}

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
    if (head === "*") return value.map((item) => redactPath(item, rest));
    const index = Number(head);
    if (!Number.isInteger(index) || index < 0 || index >= value.length) return value;
    const copy = value.slice();
    copy[index] = redactPath(value[index] as JsonValue, rest);
    return copy;
  }
  if (head === "*") return mapChildren(value, (child) => redactPath(child, rest));
  if (!Object.hasOwn(value, head)) return value;
  return { ...value, [head]: redactPath(value[head] as JsonValue, rest) };
}

function mapChildren(value: JsonValue, map: (child: JsonValue) => JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(map);
  if (value === null || typeof value !== "object") return value;
  const out: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value)) out[key] = map(value[key] as JsonValue);
  return out;
}
