import { InvalidArgumentError, LedgerError } from "../events/errors.js";

/**
 * `check` run on a value a caller gave a recorder's call (a tool call's effect): what it refuses
 * as `invalid-event`, the code of a malformed stored event, is the caller's argument, so
 * `invalid-argument` at the same path, with the same words. Not for ids: those are
 * `invalid-event` wherever they are given (DESIGN §6).
 */
export function asArgument<T>(check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (!LedgerError.isInstance(error, "invalid-event")) throw error;
    const path = error.path;
    if (path === undefined) throw error;
    const words = error.message.startsWith(`${path}: `)
      ? error.message.slice(path.length + 2)
      : error.message;
    throw new InvalidArgumentError(path, words);
  }
}
