import { isCredentialKey } from "../events/credential-name.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import { redactUrlsIn } from "../store/redact-url.js";
import { REDACTED } from "./redact.js";

/**
 * `value` with the value of every key `isCredentialKey` names, at any depth, replaced by
 * `[redacted]` (a null, which holds nothing, is kept), and the password and credential
 * parameters of every URL in it, in any string, as `***` (`redactUrlsIn`); `value` itself when
 * nothing under it is one, so a request without credentials is recorded, and hashed, as before.
 * For the parts of a request where credentials are given (model settings, provider options),
 * not for the conversation or tool schemas, which hold the app's own names (a `page_token`
 * parameter): `withoutUrlCredentials` is for those.
 */
export function withoutCredentialKeys(value: JsonValue): JsonValue {
  return cleared(value, true);
}

/**
 * `value` with the password and credential parameters of every URL in its strings as `***`,
 * and nothing else changed; `value` itself when no URL in it holds one. For a conversation: a
 * DSN a person pasted, an image's URL with a password or a signed URL's credential.
 */
export function withoutUrlCredentials(value: JsonValue): JsonValue {
  return cleared(value, false);
}

/** The walk of both: URLs in strings, and credential keys too when `byKey`. */
function cleared(value: JsonValue, byKey: boolean): JsonValue {
  if (typeof value === "string") return redactUrlsIn(value);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => cleared(item, byKey));
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  let copy: JsonObject | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next =
      byKey && isCredentialKey(key) && item !== null && item !== REDACTED
        ? REDACTED
        : cleared(item, byKey);
    if (next !== item) {
      copy ??= { ...value };
      copy[key] = next;
    }
  }
  return copy ?? value;
}
