import { LedgerError } from "../../events/errors.js";
import type { DriverErrorKind } from "./sql-backend.js";

/** Times an operation is run before a failure its policy retries is given up on. */
const MAX_ATTEMPTS = 5;

/**
 * The driver errors (`SqlBackend.classify`) after which an operation is run again. Never
 * "unavailable": a lost connection may have committed, and the caller must hear of it.
 */
export type RetryPolicy = readonly DriverErrorKind[];

/**
 * Runs `run` (given the attempt, from 1) until it returns. A ledger error is the answer and is
 * thrown as it is; a driver error that `retry` names runs it again, up to MAX_ATTEMPTS times;
 * any other, or the last, is thrown as the error `fail` makes of it.
 */
export async function withRetries<T>(options: {
  run: (attempt: number) => Promise<T>;
  classify: (error: unknown) => DriverErrorKind;
  retry: RetryPolicy;
  fail: (error: unknown, kind: DriverErrorKind) => Error | Promise<Error>;
}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await options.run(attempt);
    } catch (error) {
      if (LedgerError.isInstance(error)) throw error;
      const kind = options.classify(error);
      if (attempt < MAX_ATTEMPTS && options.retry.includes(kind)) continue;
      throw await options.fail(error, kind);
    }
  }
}
