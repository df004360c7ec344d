import { LedgerError } from "../events/errors.js";
import { uuidv7 } from "../events/ids.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";

interface Pending {
  events: NewEvent[];
  resolve: (events: LedgerEvent[]) => void;
  reject: (error: unknown) => void;
}

const RETRY_DELAYS_MS = [25, 150];

/**
 * Serialises one writer's appends to its run and commits concurrent calls together (group
 * commit): while an append is in flight, new events wait and go out as one batch. Each caller's
 * promise settles when its own events are durably committed (or the batch failed).
 *
 * An append whose outcome is unknown (`store-unavailable`) is retried with the same event ids:
 * the store's idempotent retry makes that safe, and it keeps the local position honest.
 */
export class CommitQueue {
  readonly #store: EventStore;
  readonly #address: { sessionId: string; runId: string };
  #nextSeq: number;
  #pending: Pending[] = [];
  #draining = false;
  #resync = false;

  constructor(options: { store: EventStore; sessionId: string; runId: string; nextSeq: number }) {
    this.#store = options.store;
    this.#address = { sessionId: options.sessionId, runId: options.runId };
    this.#nextSeq = options.nextSeq;
  }

  /** The run length this writer believes in (the next seq it will write). */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /**
   * Queues events that must be committed together; resolves with them as stored. An event
   * without an `eventId` is given one here (the object is updated).
   */
  commit(events: NewEvent[]): Promise<LedgerEvent[]> {
    // Ids are fixed before the first try: a retry after a lost reply must send the same events,
    // or the store sees new ones at a position its first try already filled (`conflict`).
    for (const event of events) event.eventId ??= uuidv7();
    return new Promise((resolve, reject) => {
      this.#pending.push({ events, resolve, reject });
      if (!this.#draining) {
        this.#draining = true;
        // A microtask lets calls started in the same tick (parallel tool calls) join the batch.
        // (A resolved promise, not queueMicrotask: Node wraps the latter in an AsyncResource,
        // which costs more than the rest of the queue on every recorded call.)
        void Promise.resolve().then(() => this.#drain());
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        try {
          if (this.#resync) {
            const head = await this.#store.runHead(this.#address);
            this.#nextSeq = head.length;
            this.#resync = false;
          }
          // One call alone (a sequential agent's every call) sends its events as they are.
          const stored = await this.#appendWithRetry(
            batch.length === 1
              ? (batch[0] as Pending).events
              : batch.flatMap((item) => item.events),
          );
          let offset = 0;
          for (const item of batch) {
            item.resolve(stored.slice(offset, offset + item.events.length));
            offset += item.events.length;
          }
        } catch (error) {
          // After an unknown outcome the next batch re-reads the head instead of guessing.
          if (!LedgerError.isInstance(error) || error.code === "store-unavailable")
            this.#resync = true;
          for (const item of batch) item.reject(error);
        }
      }
    } finally {
      this.#draining = false;
    }
  }

  async #appendWithRetry(events: NewEvent[]): Promise<LedgerEvent[]> {
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.#store.append({
          sessionId: this.#address.sessionId,
          runId: this.#address.runId,
          expectedSeq: this.#nextSeq,
          events,
        });
        const last = result.events[result.events.length - 1];
        if (last) this.#nextSeq = Math.max(this.#nextSeq, last.seq + 1);
        return result.events;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined || !LedgerError.isInstance(error, "store-unavailable")) throw error;
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
