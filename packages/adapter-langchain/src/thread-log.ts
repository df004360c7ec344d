import {
  type Actor,
  type EventStore,
  isValidId,
  LedgerError,
  type LedgerEvent,
  type NewEvent,
  sha256Hex,
} from "@agent-ledger/core";

const PAGE = 1000;
const MAX_CONFLICT_RETRIES = 8;
const ACTOR: Actor = { type: "system", id: "langgraph-checkpointer", framework: "langgraph" };

/** The ledger run that holds one LangGraph thread: `thread:<thread_id>` (hashed if unusable). */
export function threadRunId(threadId: string): string {
  const plain = `thread:${threadId}`;
  return isValidId(plain) ? plain : `thread-sha256:${sha256Hex(threadId)}`;
}

/**
 * The events of one thread's run, kept in memory and caught up from the store before each read
 * and write, so several savers (or a process that resumed after a crash) share the run. Writes
 * are serialised per thread and retried on `conflict` (they are facts, their order is free).
 */
export class ThreadLog {
  readonly events: LedgerEvent[] = [];
  #lock: Promise<unknown> = Promise.resolve();

  constructor(
    readonly store: EventStore,
    readonly sessionId: string,
    readonly runId: string,
  ) {}

  /** Reads the events committed since the last sync. */
  async sync(): Promise<LedgerEvent[]> {
    for (;;) {
      const page = await this.store.readRun({
        sessionId: this.sessionId,
        runId: this.runId,
        fromSeq: this.events.length,
        limit: PAGE,
      });
      for (const event of page.events)
        if (event.seq === this.events.length) this.events.push(event);
      if (page.events.length < PAGE) return this.events;
    }
  }

  /** Appends events (after a `run.started` when the run is new); exclusive per thread. */
  append(threadId: string, events: NewEvent[]): Promise<LedgerEvent[]> {
    const next = this.#lock.then(() => this.#append(threadId, events));
    this.#lock = next.catch(() => undefined);
    return next;
  }

  async #append(threadId: string, events: NewEvent[]): Promise<LedgerEvent[]> {
    for (let attempt = 0; ; attempt++) {
      await this.sync();
      const batch: NewEvent[] = events.map((event) => ({ actor: ACTOR, ...event }));
      if (this.events.length === 0)
        batch.unshift({
          type: "run.started",
          actor: ACTOR,
          payload: { threadId, kind: "langgraph-thread" },
        });
      try {
        const result = await this.store.append({
          sessionId: this.sessionId,
          runId: this.runId,
          expectedSeq: this.events.length,
          events: batch,
        });
        for (const event of result.events)
          if (event.seq === this.events.length) this.events.push(event);
        return result.events;
      } catch (error) {
        if (!LedgerError.isInstance(error, "conflict") || attempt >= MAX_CONFLICT_RETRIES)
          throw error;
      }
    }
  }
}
