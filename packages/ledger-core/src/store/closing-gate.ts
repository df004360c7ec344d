import { StoreUnavailableError } from "../events/errors.js";

/**
 * What a store's close() means, once for every store: new operations are refused
 * (`store-unavailable`, `nothingWritten`), those under way finish (each within the store's own
 * bound), then the store's connection is closed; a second close() gets the same promise. A
 * service that closes its store on SIGTERM so gets an answer for every append it made: before,
 * a pool's end() left appends waiting for a connection unanswered until its timeout (a process
 * could exit with them never settled), a second close() failed on the pool, and a Redis client
 * sent a command after quit() kept the process alive for its socket timeout.
 */
export class ClosingGate {
  /**
   * Operations under way, counted (a Set of their promises, added to and deleted from by every
   * operation, made the Set copy itself every few operations to drop the holes deletes leave).
   */
  #underWay = 0;
  /** Resolves close()'s wait once the count is back to 0. */
  #idle: (() => void) | undefined;
  readonly #settled = () => {
    if (--this.#underWay === 0 && this.#idle !== undefined) this.#idle();
  };
  #closing: Promise<void> | undefined;

  constructor(readonly storeName: string) {}

  /**
   * Whether close() was called: an operation under way then finishes with what it has (a read
   * whose connection was lost is not sent again, see retryRead), and the connection closes.
   */
  get closing(): boolean {
    return this.#closing !== undefined;
  }

  /** Throws the refusal `run` would reject with, once close() was called (for synchronous stores). */
  check(operation: string): void {
    if (this.#closing !== undefined) throw this.#refusal(operation);
  }

  #refusal(operation: string): StoreUnavailableError {
    return new StoreUnavailableError(
      `${this.storeName} ${operation} refused: the store is closed (close() was called)`,
      undefined,
      { nothingWritten: true },
    );
  }

  /** `run`, counted as under way until it settles; refused once close() was called. */
  run<T>(operation: string, run: () => Promise<T>): Promise<T> {
    if (this.#closing !== undefined) return Promise.reject(this.#refusal(operation));
    let promise: Promise<T>;
    try {
      promise = run();
    } catch (error) {
      return Promise.reject(error);
    }
    this.#underWay++;
    promise.then(this.#settled, this.#settled);
    return promise;
  }

  /** Refuses new operations, waits for those under way, then runs `closeConnection` once. */
  close(closeConnection: () => Promise<void>): Promise<void> {
    this.#closing ??= (async () => {
      // No operation starts once #closing is set, so the count only goes down.
      if (this.#underWay > 0) await new Promise<void>((resolve) => (this.#idle = resolve));
      await closeConnection();
    })();
    return this.#closing;
  }
}
