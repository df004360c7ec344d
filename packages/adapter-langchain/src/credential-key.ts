import { isCredentialKey as namesCredential } from "@agent-ledger/core";

/**
 * True for a parameter name that holds, or may hold, a credential: core's `isCredentialKey`
 * (secret keys, `auth`, tokens, passwords, secrets, credentials, cookies...), and header
 * containers (`headers`, `defaultHeaders`, `default_headers`): any header may carry one, and
 * invocation parameters never need them. Compared without case, `-`, `_`, `.` or spaces.
 */
export function isCredentialKey(key: string): boolean {
  const name = key.toLowerCase().replace(/[-_.\s]/g, "");
  return name.endsWith("header") || name.endsWith("headers") || namesCredential(key);
}
