/**
 * Parts of a parameter name that mark a credential wherever they appear (`x-api-key`,
 * `adminAPIKey`, `Ocp-Apim-Subscription-Key`, `client_secret`, `googleCredentials`...). A name
 * merely ending in "key" is not one (`prompt_cache_key`, `idempotencyKey`): only these keys are.
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
  "passphrase",
  "credential",
  "authorization",
  "authentication",
  "cookie",
  "bearer",
  "connectionstring",
];

/**
 * True for a parameter name that holds, or may hold, a credential: header containers
 * (`headers`, `defaultHeaders`, `default_headers`: any header may carry one), cookies, secret
 * keys, `auth`, tokens, passwords, secrets, credentials. Compared without case, `-`, `_`, `.`
 * or spaces, so `apiKey`, `api_key` and `API-Key` are one name.
 */
export function isCredentialKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_.\s]/g, "");
  return (
    name === "key" ||
    name.endsWith("auth") ||
    name.endsWith("header") ||
    name.endsWith("headers") ||
    name.endsWith("token") ||
    SECRET_PARTS.some((part) => name.includes(part))
  );
}
