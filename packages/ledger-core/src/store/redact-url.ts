import { isCredentialKey } from "../events/credential-name.js";

/**
 * Query parameters whose value is a credential that `isCredentialKey` does not name: pg's
 * `sslkey` (the client's private key file), any name with `token` in it (not only at its
 * end), and a presigned URL's signature, which grants access until it expires (S3's and GCS's
 * `X-Amz-Signature` / `X-Goog-Signature`, CloudFront's `Signature`, an Azure SAS's `sig`). The
 * drivers' password parameters (mysql2's `password1`..`password3`, `passphrase`, pg's
 * `sslpassword`, `pass`) and every name with `secret` in it, it names.
 */
const secretParam = /^sslkey$|token|signature$|^sig$/i;
const queryParam = /([?&]([^=&#]*)=)([^&#]*)/g;

/** A query parameter whose value is a credential: any `isCredentialKey` names, and those above. */
function isSecretParam(name: string): boolean {
  return secretParam.test(name) || isCredentialKey(name);
}

/**
 * A store URL as agent-ledger shows it anywhere: the stores' `describe().location` and error
 * messages, the CLI's `resolve` commands, the viewer's page. The password is `***` (the user
 * name kept: it says which account), and so is the value of every query parameter that carries
 * a credential, and mysql2's `ssl` when it is a JSON object (it can hold key material). Nothing
 * else changes: the URL is not re-encoded, so a person finds their own path in a message (a
 * SQLite path is taken as is: `my%20ledger.db` would be another file), a command runs once the
 * password is put back, and `redactUrl(url) === url` says the URL holds no secret.
 */
export function redactUrl(url: string): string {
  return withoutPassword(url).replace(
    queryParam,
    (all, key: string, name: string, value: string) =>
      isSecretParam(decoded(name)) ||
      (decoded(name).toLowerCase() === "ssl" && decoded(value).trimStart().startsWith("{"))
        ? `${key}***`
        : all,
  );
}

/** A URL written in text: a scheme and `//`, up to the next white space. */
const urlInText = /[a-z][a-z0-9+.-]*:\/\/\S+/gi;

/**
 * `text` (prose, a setting, a message) with every URL in it redacted as `redactUrl` redacts one,
 * and nothing else changed: an address or a colon elsewhere in the text is not a password.
 * `text` itself when it holds no secret.
 */
export function redactUrlsIn(text: string): string {
  return text.includes("://") ? text.replace(urlInText, redactUrl) : text;
}

/**
 * `text` (a driver's message about `url`) with every secret `url` holds shown as `***`: its
 * password and the values of its credential parameters, as written and decoded. pg's parser
 * reads the file `?sslkey=` names, and its ENOENT names the file.
 */
export function withoutSecrets(text: string, url: string): string {
  const secrets: string[] = [];
  const masked = withoutPassword(url);
  const start = masked.indexOf("***");
  if (masked !== url && start >= 0)
    secrets.push(url.slice(start, url.length - (masked.length - start - 3)));
  for (const [, , name, value] of url.matchAll(queryParam))
    if (isSecretParam(decoded(name ?? "")) && value) secrets.push(value);
  const all = [...new Set(secrets.flatMap((secret) => [secret, decoded(secret)]))]
    .filter((secret) => secret.length > 0)
    .sort((a, b) => b.length - a.length);
  return all.reduce((shown, secret) => shown.split(secret).join("***"), text);
}

/**
 * `scheme://user:password@host...` with the password as `***`. So is a server URL whose `//`
 * is missing or mistyped (`postgres:/user:pw@host`, `postgres//user:pw@host`, `user:pw@host`):
 * the URL is refused, and its message must not show the password either. A file's URL
 * (`sqlite:`, `file:`) and `memory:` have no user info: a path holding ":" and "@" stays.
 */
function withoutPassword(url: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0].length;
  if (authority === undefined) {
    if (/^(sqlite|file|memory):/i.test(url)) return url;
    const masked = url.replace(/^((?:[a-z][a-z0-9+.-]*:)?\/*[^:/?#@]*):.*@/is, "$1:***@");
    return masked !== url ? masked : url.replace(/^([^:?#@]*):.*@/s, "$1:***@");
  }
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {
    // A password with an unescaped "/", "?" or "#" breaks the URL.
    return toLastAt(url);
  }
  if (parsed.password === "") return url;
  // It parsed: the authority ends at the first "/", "?" or "#", its user info at its last "@",
  // and the user name (which holds no ":") at the first ":".
  const end = url.slice(authority).search(/[/?#]/);
  const at = url.lastIndexOf("@", end < 0 ? url.length : authority + end);
  const colon = url.indexOf(":", authority);
  if (colon < 0 || colon > at) return toLastAt(url);
  return `${url.slice(0, colon)}:***${url.slice(at)}`;
}

/**
 * The password masked where the authority's end is unknown: everything from the user name's
 * ":" to the URL's last "@" (more than the password when a later part holds an "@", never less).
 */
function toLastAt(url: string): string {
  return url.replace(/^([^/]*\/\/[^:/?#@]*):.*@/s, "$1:***@");
}

/** A URL component with its %-escapes (and `+` for a space) decoded; as is if malformed. */
function decoded(component: string): string {
  try {
    return decodeURIComponent(component.replace(/\+/g, " "));
  } catch {
    return component;
  }
}
