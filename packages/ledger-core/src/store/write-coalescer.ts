/**
 * Group commit across writers of one store: a write starts at once while fewer than
 * `maxInFlight` are running; one that arrives while they all run waits, and every write waiting
 * when one finishes goes out together in one batch (one statement, one commit, one fsync).
 *
 * A lone writer never waits (its write starts at once), so latency is unchanged; concurrent
 * writers (several recorders on one store, e.g. a server running many agents) share round trips
 * and commits, which is where a CPU-bound client or a busy server spends its time.
 *
 * `flush` answers each item of a batch in order; if it throws, every item of that batch is
 * rejected with the same error.
 */
export class WriteCoalescer<T, R> {
  readonly #flush: (items: T[]) => Promise<R[]>;
  readonly #maxInFlight: number;
  readonly #maxBatch: number;
  #waiting: { item: T; resolve: (result: R) => void; reject: (error: unknown) => void }[] = [];
  #inFlight = 0;

  constructor(
    flush: (items: T[]) => Promise<R[]>,
    options: { maxInFlight: number; maxBatch: number },
  ) {
    this.#flush = flush;
    this.#maxInFlight = options.maxInFlight;
    this.#maxBatch = options.maxBatch;
  }

  submit(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#start();
    });
  }

  #start(): void {
    while (this.#inFlight < this.#maxInFlight && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#maxBatch);
      this.#inFlight++;
      let flushed: Promise<R[]>;
      try {
        flushed = this.#flush(batch.map((entry) => entry.item));
      } catch (error) {
        flushed = Promise.reject(error);
      }
      flushed
        .then(
          (results) => {
            batch.forEach((entry, index) => {
              entry.resolve(results[index] as R);
            });
          },
          (error: unknown) => {
            for (const entry of batch) entry.reject(error);
          },
        )
        .finally(() => {
          this.#inFlight--;
          this.#start();
        });
    }
  }
}
