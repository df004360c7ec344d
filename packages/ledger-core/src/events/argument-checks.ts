import { InvalidArgumentError } from "./errors.js";
import { isJsonObject } from "./json.js";

/**
 * `invalid-argument` at `path` unless `value` is an object (not null, an array or a bare id),
 * where a call reads fields of it: from JavaScript (no types to stop it) a missing argument was
 * a bare `TypeError` reading a field of undefined, where every other bad input is a
 * `LedgerError` naming it (§6).
 */
export function assertObjectArgument(
  value: unknown,
  path: string,
  message: string,
): asserts value is object {
  if (!isJsonObject(value)) throw new InvalidArgumentError(path, message);
}

/** The message for an attempt argument that is not one, as `doing` (e.g. "completing") needs. */
export function attemptNeeded(doing: string): string {
  return `${doing} an attempt needs the attempt (as before* returned it, an unresolved-attempt error carries it, or inspectSession lists it), not its id`;
}
