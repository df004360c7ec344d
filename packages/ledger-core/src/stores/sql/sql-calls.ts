import { LedgerError, StoreUnavailableError } from "../../events/errors.js";
import { retryRead } from "../read-retry.js";
import { timeoutIn } from "../server-timeout.js";
import { type RetryPolicy, withRetries } from "./retry.js";
import { driverError, type SqlBackend } from "./sql-backend.js";

/** Operations that write in one transaction, so a refused one wrote nothing at all. */
const ONE_TRANSACTION = new Set(["append", "fork", "deleteSession"]);

/**
 * Write programs run again after a unique violation as after a rolled-back transaction: a racing
 * writer committed first (two writers creating one run, say), and the re-run sees its rows.
 */
export const WRITES: RetryPolicy = ["unique", "transient"];

/**
 * Reads, putBlob's idempotent upsert and the migration run again after a transient failure
 * (serialization failure, deadlock, lock timeout), which rolled back whatever it was in: on a
 * pool whose transactions are SERIALIZABLE, PostgreSQL cancels even a lone SELECT that read what
 * concurrent appends wrote.
 */
export const READS: RetryPolicy = ["transient"];

/** close() runs once: it rolls nothing back, and a pool refuses a second end(). */
export const ONCE: RetryPolicy = [];

/**
 * How `SqlEventStore` calls its backend: retried by policy, a read sent again on another
 * connection when its own was lost, and the driver error it gives up on mapped to a
 * `LedgerError` named after the store and the operation.
 */
export class SqlCalls {
  readonly #backend: SqlBackend;
  readonly #name: string;
  readonly #closing: () => boolean;

  constructor(options: { backend: SqlBackend; name: string; closing: () => boolean }) {
    this.#backend = options.backend;
    this.#name = options.name;
    this.#closing = options.closing;
  }

  /**
   * Runs a read as guard does, sent again on another connection when its own was lost under
   * it (retryRead; the backend tells such a failure), never when it passed a bound.
   */
  read<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return this.guard(operation, () =>
      retryRead({
        read: run,
        lostConnection: (error) =>
          this.#backend.lostConnection?.(error) === true &&
          timeoutIn(error, (cause) => this.#backend.timeoutMessage?.(cause)) === undefined,
        closing: this.#closing,
      }),
    );
  }

  /**
   * Runs a read, an idempotent write (putBlob's upsert, a page of collectBlobs) or the
   * migration (READS), mapping the driver error it gives up on to `store-unavailable`.
   */
  guard<T>(operation: string, run: () => Promise<T>, retry = READS): Promise<T> {
    return withRetries({
      run,
      classify: (error) => this.#backend.classify(error),
      retry,
      fail: (error) => this.unavailable(operation, error),
    });
  }

  /**
   * `store-unavailable` for a driver error the store gives up on, the driver error as `cause`.
   * A wait that passed the store's bound says so (a driver's own words for it rarely do).
   */
  unavailable(operation: string, error: unknown): LedgerError {
    if (this.#backend.damaged?.(error) === true) {
      const cause = driverError(error).error;
      return new LedgerError(
        "tamper-detected",
        `${this.#name} ${operation} failed: the database is damaged (${cause instanceof Error ? cause.message : String(cause)}). Waiting will not mend it: restore the file from a backup, or recover what is readable into a new file (sqlite3 <file> ".recover" | sqlite3 <new file>) and check it with agent-ledger verify`,
        { cause },
      );
    }
    // Only of an operation that is one transaction: a paged one (collectBlobs, putBlobs in
    // chunks) may have committed pages before the one refused.
    const nothingWritten =
      ONE_TRANSACTION.has(operation) && this.#backend.wroteNothing?.(error) === true;
    const timeout = timeoutIn(error, (cause) => this.#backend.timeoutMessage?.(cause));
    if (timeout !== undefined)
      return new StoreUnavailableError(
        `${this.#name} ${operation} failed: ${timeout.message}`,
        timeout.error,
        { nothingWritten },
      );
    const cause = driverError(error).error;
    const message = cause instanceof Error ? cause.message : String(cause);
    return new StoreUnavailableError(`${this.#name} ${operation} failed: ${message}`, cause, {
      nothingWritten,
    });
  }
}
