import {
  type Actor,
  type EventStore,
  hasLoneSurrogate,
  isValidId,
  LedgerError,
  type LedgerEvent,
  type NewEvent,
  sha256Hex,
} from "@agent-ledger/core";
import { DELETED_TYPE, threadIdFields } from "./checkpoint-index.js";

const PAGE = 1000;
const MAX_CONFLICT_RETRIES = 8;
const ACTOR: Actor = { type: "system", id: "langgraph-checkpointer", framework: "langgraph" };

/**
 * The ledger run that holds one LangGraph thread: `thread:<thread_id>`, or, when that is not a
 * valid ledger id (too long, control characters), `thread-sha256:<hex>` with the hex SHA-256 of
 * the thread_id's UTF-8 bytes. UTF-8 turns every lone surrogate into U+FFFD, so `a\uD800` and
 * `a\uDBFF` would share a run: an id with lone surrogates hashes its JSON text instead (which
 * keeps them apart), under its own prefix so that it cannot meet a well-formed id's hash.
 */
export function threadRunId(threadId: string): string {
  const plain = `thread:${threadId}`;
  if (isValidId(plain)) return plain;
  return hasLoneSurrogate(threadId)
    ? `thread-json-sha256:${sha256Hex(JSON.stringify(threadId))}`
    : `thread-sha256:${sha256Hex(threadId)}`;
}

/**
 * The events of one thread's run, kept in memory and caught up from the store before each read
 * and write, so several savers (or a process that resumed after a crash) share the run. Writes
 * are serialised per thread and retried on `conflict` (they are facts, their order is free).
 */
export class ThreadLog {
  /**
   * The events after the thread's last deletion marker: reads ignore everything before it, so a
   * deleted thread holds no memory for its old checkpoints.
   */
  readonly events: LedgerEvent[] = [];
  /** The seq the next event of the run gets: where this log has read (and appends) up to. */
  #next = 0;
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
        fromSeq: this.#next,
        limit: PAGE,
      });
      for (const event of page.events) this.#add(event);
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
      if (this.#next === 0)
        batch.unshift({
          type: "run.started",
          actor: ACTOR,
          payload: { ...threadIdFields(threadId), kind: "langgraph-thread" },
        });
      try {
        const result = await this.store.append({
          sessionId: this.sessionId,
          runId: this.runId,
          expectedSeq: this.#next,
          events: batch,
        });
        for (const event of result.events) this.#add(event);
        return result.events;
      } catch (error) {
        if (!LedgerError.isInstance(error, "conflict") || attempt >= MAX_CONFLICT_RETRIES)
          throw error;
      }
    }
  }

  #add(event: LedgerEvent): void {
    if (event.seq !== this.#next) return;
    this.#next += 1;
    if (event.type === DELETED_TYPE) this.events.length = 0;
    else this.events.push(event);
  }
}
