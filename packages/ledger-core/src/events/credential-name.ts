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
 * credential: API and other secret keys, `auth`, `pass`, authorization and proxy-authorization,
 * tokens, passwords, secrets, credentials, cookies, connection strings. Compared without case,
 * `-`, `_`, `.` or spaces, so `apiKey`, `api_key`, `X-API-Key` and `x-goog-api-key` all are.
 * Ordinary names that only end in k, key or tokens (`topK`, `prompt_cache_key`, `max_tokens`)
 * are not. Adapters use it for the keys they remove from what they record.
 */
export function isCredentialKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_.\s]/g, "");
  return (
    name === "key" ||
    name === "pass" ||
    name.endsWith("auth") ||
    name.endsWith("token") ||
    SECRET_PARTS.some((part) => name.includes(part))
  );
}
