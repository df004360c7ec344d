import { InvalidArgumentError } from "./errors.js";

/**
 * Refuses a missing or non-object argument where a method reads fields of it: from JavaScript
 * (no types to stop it), `beforeModelCall()` or `modelCompleted(undefined, ...)` threw a bare
 * `TypeError` reading a field of undefined, where every other bad input is a `LedgerError`
 * naming it (§6).
 */
export function assertObjectArgument(value: unknown, path: string, message: string): void {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new InvalidArgumentError(path, message);
}

/** The message for an attempt argument that is not one, as `doing` (e.g. "completing") needs. */
export function attemptNeeded(doing: string): string {
  return `${doing} an attempt needs the attempt (as before* returned it, an unresolved-attempt error carries it, or inspectSession lists it), not its id`;
}
