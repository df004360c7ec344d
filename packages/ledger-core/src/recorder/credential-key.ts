import { isCredentialKey } from "../events/credential-name.js";
import type { JsonObject, JsonValue } from "../events/json.js";
import { redactUrl } from "../store/redact-url.js";
import { REDACTED } from "./redact.js";

/**
 * `value` with the value of every key `isCredentialKey` names, at any depth, replaced by
 * `[redacted]` (a null, which holds nothing, is kept), and the password and credential
 * parameters of every URL in it as `***` (`redactUrl`); `value` itself when nothing under it is
 * one, so a request without credentials is recorded, and hashed, as before. For the parts of a
 * request where credentials are given (model settings, provider options), not for the
 * conversation or tool schemas, which hold the app's own names (a `page_token` parameter).
 */
export function withoutCredentialKeys(value: JsonValue): JsonValue {
  // A URL's password or credential parameter (a proxy, a DSN, a base URL with ?api_key=).
  if (typeof value === "string") return value.includes("://") ? redactUrl(value) : value;
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) {
    const items = value.map(withoutCredentialKeys);
    return items.some((item, index) => item !== value[index]) ? items : value;
  }
  let copy: JsonObject | undefined;
  for (const [key, item] of Object.entries(value)) {
    const next =
      isCredentialKey(key) && item !== null && item !== REDACTED
        ? REDACTED
        : withoutCredentialKeys(item);
    if (next !== item) {
      copy ??= { ...value };
      copy[key] = next;
    }
  }
  return copy ?? value;
}
