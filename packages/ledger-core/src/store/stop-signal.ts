import { InvalidArgumentError } from "../events/errors.js";

/**
 * An operation's `signal` option, checked: an `AbortSignal` or undefined. From JavaScript a
 * value that is none (`true`, a controller instead of its signal) would be read as "never
 * stop", and the caller's Ctrl-C silently ignored.
 */
export function stopSignal(signal: unknown, path = "$.signal"): AbortSignal | undefined {
  if (signal === undefined || signal instanceof AbortSignal) return signal;
  throw new InvalidArgumentError(path, "signal must be an AbortSignal (controller.signal)");
}

/**
 * Whether an operation that works a page at a time (`collectBlobs`, `verifyRun`) was asked by
 * its `signal` to stop before its next page. A turn of the event loop comes first: a signal
 * aborted from a process's SIGINT handler is aborted only once that handler has run, and on a
 * store whose calls complete synchronously (SQLite) a loop of `await`s gives it none. Without a
 * signal no turn is taken: nothing changes for a caller that cannot stop the operation.
 */
export async function stopBeforeNextPage(signal: AbortSignal | undefined): Promise<boolean> {
  if (signal === undefined) return false;
  await new Promise((resolve) => setImmediate(resolve));
  return signal.aborted;
}
