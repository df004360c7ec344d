interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/** The writes of one key: those running and those waiting. */
interface Lane<T, R> {
  waiting: Waiting<T, R>[];
  inFlight: number;
}

/**
 * Group commit across writers of one store, per key (a session): a write starts at once while
 * fewer than `maxInFlight` writes of its key are running; one that arrives while they all run
 * waits, and every write of that key waiting when one finishes goes out together in one batch
 * (one statement, one commit).
 *
 * Writes of one session all take its cursor row, so the database would run them one after the
 * other anyway, each with its own round trip and commit; gathered here they share both. Writes
 * of different keys never wait for each other, and a lone writer never waits at all.
 *
 * `flush` answers each item of a batch in order; if it fails, every item of that batch is
 * rejected with the same error.
 */
export class WriteCoalescer<T, R> {
  readonly #flush: (items: T[]) => Promise<R[]>;
  readonly #key: (item: T) => string;
  readonly #maxInFlight: number;
  readonly #maxBatch: number;
  readonly #lanes = new Map<string, Lane<T, R>>();

  constructor(
    flush: (items: T[]) => Promise<R[]>,
    options: { key: (item: T) => string; maxInFlight: number; maxBatch: number },
  ) {
    this.#flush = flush;
    this.#key = options.key;
    this.#maxInFlight = options.maxInFlight;
    this.#maxBatch = options.maxBatch;
  }

  submit(item: T): Promise<R> {
    const key = this.#key(item);
    let lane = this.#lanes.get(key);
    if (lane === undefined) {
      lane = { waiting: [], inFlight: 0 };
      this.#lanes.set(key, lane);
    }
    const entered = lane;
    return new Promise((resolve, reject) => {
      entered.waiting.push({ item, resolve, reject });
      this.#start(key, entered);
    });
  }

  #start(key: string, lane: Lane<T, R>): void {
    while (lane.inFlight < this.#maxInFlight && lane.waiting.length > 0) {
      const batch = lane.waiting.splice(0, this.#maxBatch);
      lane.inFlight++;
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
          lane.inFlight--;
          if (lane.inFlight === 0 && lane.waiting.length === 0) this.#lanes.delete(key);
          else this.#start(key, lane);
        });
    }
  }
}
