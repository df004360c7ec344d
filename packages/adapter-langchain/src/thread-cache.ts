import type { ThreadLog } from "./thread-log.js";

interface Entry {
  log: ThreadLog;
  /** Operations using the log now: while any runs, it is never evicted. */
  users: number;
}

/**
 * The thread logs a saver keeps in memory: the `capacity` most recently used, so that a
 * long-running server with many threads does not hold every thread it ever touched. An evicted
 * thread is read again from the store on its next use, as a new process would. A log in use is
 * never evicted: a put in flight keeps its writer position, and no second log of the same thread
 * can start appending beside it (the cache may then briefly hold more than `capacity`).
 */
export class ThreadLogCache {
  // A Map iterates in insertion order: re-inserting on each use keeps the least recent first.
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly capacity: number,
    readonly make: (threadId: string) => ThreadLog,
  ) {}

  /** Runs `operation` on the thread's log, holding it in the cache until it settles. */
  async use<T>(threadId: string, operation: (log: ThreadLog) => Promise<T>): Promise<T> {
    let entry = this.#entries.get(threadId);
    if (entry) this.#entries.delete(threadId);
    else entry = { log: this.make(threadId), users: 0 };
    this.#entries.set(threadId, entry);
    entry.users += 1;
    this.#evict();
    try {
      return await operation(entry.log);
    } finally {
      entry.users -= 1;
      this.#evict();
    }
  }

  /** Forgets the thread's log unless an operation still uses it (then eviction will). */
  drop(threadId: string): void {
    if (this.#entries.get(threadId)?.users === 0) this.#entries.delete(threadId);
  }

  #evict(): void {
    if (this.#entries.size <= this.capacity) return;
    for (const [threadId, entry] of this.#entries) {
      if (this.#entries.size <= this.capacity) return;
      if (entry.users === 0) this.#entries.delete(threadId);
    }
  }
}
