import type { JsonObject, JsonValue } from "../events/json.js";
import { redactUrl } from "../store/redact-url.js";
import { REDACTED } from "./redact.js";

/**
 * Parts of a key that mark a credential wherever they appear (`x-api-key`, `adminAPIKey`,
 * `Ocp-Apim-Subscription-Key`, `client_secret`, `googleCredentials`...). A name merely ending
 * in "key" is not one (`prompt_cache_key`, `idempotencyKey`): only these keys are.
 */
const SECRET_PARTS = [
  "apikey",
  "privatekey",
  "subscriptionkey",
  "secretkey",
  "accesskey",
  "accountkey",
  "sharedkey",
  "signingkey",
  "masterkey",
  "sessionkey",
  "secret",
  "password",
  "passwd",
  "pwd",
  "jwt",
  "passphrase",
  "credential",
  "authorization",
  "authentication",
  "cookie",
  "bearer",
  "connectionstring",
];

/**
 * True for a key (a parameter, setting or header name) whose value is, or may be, a
 * credential: API and other secret keys, `auth`, authorization and proxy-authorization,
 * tokens, passwords, secrets, credentials, cookies, connection strings. Compared without case,
 * `-`, `_`, `.` or spaces, so `apiKey`, `api_key`, `X-API-Key` and `x-goog-api-key` all are.
 * Ordinary names that only end in k, key or tokens (`topK`, `prompt_cache_key`, `max_tokens`)
 * are not. Adapters use it for the keys they remove from what they record.
 */
export function isCredentialKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_.\s]/g, "");
  return (
    name === "key" ||
    name.endsWith("auth") ||
    name.endsWith("token") ||
    SECRET_PARTS.some((part) => name.includes(part))
  );
}

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
