import {
  type Actor,
  type EventStore,
  LedgerError,
  type LedgerEvent,
  type NewEvent,
  PayloadCompactor,
  resolveEvents,
} from "@agent-ledger/core";
import { DELETED_TYPE } from "./checkpoint-index.js";
import {
  type CheckpointHead,
  childPutElsewhere,
  continuedElsewhere,
} from "./continued-elsewhere.js";
import { threadIdFields } from "./thread-run-id.js";

const PAGE = 1000;
const MAX_CONFLICT_RETRIES = 8;
const ACTOR: Actor = { type: "system", id: "langgraph-checkpointer", framework: "langgraph" };

/** A checkpoint being put: its namespace, its id and its parent's (none for a thread's first). */
export interface CheckpointPut {
  checkpointNs: string;
  checkpointId: string;
  parentId: string | undefined;
}

/** A task's writes being put (`putWrites`) on the checkpoint `checkpointId` of `checkpointNs`. */
export interface CheckpointWrites {
  writes: true;
  checkpointNs: string;
  checkpointId: string;
}

/**
 * The events of one thread's run, kept in memory and caught up from the store before each read
 * and write, so several savers (or a process that resumed after a crash) share the run. Writes
 * are serialised per thread and retried on `conflict` (they are facts, their order is free).
 *
 * Payloads go to the store as the recorder stores them (§8): a subtree over the default
 * threshold (a channel's serialized value: the whole message history, every step) in a blob put
 * by the same append and named in `evidenceRefs`, so retention keeps it. The events held here
 * are resolved: the index reads them field by field.
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
  /** Knows the refs this thread's events name, so content stored before is not put again. */
  readonly #compactor = new PayloadCompactor(undefined);
  /** By checkpoint namespace: the checkpoint the saver's graph goes on from (see `noteHead`). */
  readonly #heads = new Map<string, CheckpointHead>();

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
      // Resolved as read: an event without blob references is passed through as it is.
      for (const event of await resolveEvents(this.store, page.events)) {
        this.#compactor.committed(event.evidenceRefs ?? []);
        this.#add(event);
      }
      if (page.events.length < PAGE) return this.events;
    }
  }

  /**
   * Notes `checkpointId` as the checkpoint of `checkpointNs` the saver's graph goes on from: the
   * one it put, or read as the thread's latest. A put after it is refused once another writer
   * has put a checkpoint after it since (see `childPutElsewhere`).
   */
  noteHead(checkpointNs: string, checkpointId: string): void {
    this.#heads.set(checkpointNs, { checkpointId, seq: this.#next });
  }

  /**
   * Appends events (after a `run.started` when the run is new); exclusive per thread. With `put`
   * (a checkpoint's), refused with `conflict` if another writer went on from its parent while
   * that was the saver's head; once saved, the checkpoint is the head. A task's writes on the
   * head are refused the same way (they are the writes of a step another writer has done).
   */
  append(
    threadId: string,
    events: NewEvent[],
    put?: CheckpointPut | CheckpointWrites,
  ): Promise<LedgerEvent[]> {
    const next = this.#lock.then(() => this.#append(threadId, events, put));
    this.#lock = next.catch(() => undefined);
    return next;
  }

  async #append(
    threadId: string,
    events: NewEvent[],
    put: CheckpointPut | CheckpointWrites | undefined,
  ): Promise<LedgerEvent[]> {
    for (let attempt = 0; ; attempt++) {
      await this.sync();
      if (put) this.#refuseContinuedElsewhere(threadId, put);
      // Compacted after the sync: content another saver stored meanwhile is not put again.
      const { batch: compacted, blobs, refs } = this.#compact(events);
      const batch: NewEvent[] = compacted.map((event) => ({ actor: ACTOR, ...event }));
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
          ...(blobs.length > 0 ? { blobs } : {}),
        });
        this.#compactor.committed(refs);
        // Held as given (resolved), not as stored: the caller's events come last in the batch.
        const given = result.events.length - events.length;
        const held = result.events.map((event, index) =>
          index < given ? event : { ...event, payload: events[index - given]?.payload ?? null },
        );
        for (const event of held) this.#add(event);
        if (put && !("writes" in put)) this.noteHead(put.checkpointNs, put.checkpointId);
        return held;
      } catch (error) {
        if (!LedgerError.isInstance(error, "conflict") || attempt >= MAX_CONFLICT_RETRIES)
          throw error;
      }
    }
  }

  #refuseContinuedElsewhere(threadId: string, put: CheckpointPut | CheckpointWrites): void {
    const writes = "writes" in put;
    // What the graph goes on from: a checkpoint's parent, or the checkpoint a task wrote on.
    const parentId = writes ? put.checkpointId : put.parentId;
    if (parentId === undefined) return;
    const head = this.#heads.get(put.checkpointNs);
    const childId = childPutElsewhere(this.events, head, put.checkpointNs, parentId);
    if (head === undefined || childId === undefined) return;
    throw continuedElsewhere({
      sessionId: this.sessionId,
      runId: this.runId,
      threadId,
      parentId,
      childId,
      head,
      actualSeq: this.#next,
      refused: writes ? "writes" : "checkpoint",
    });
  }

  /**
   * `events` with large payload parts moved to blobs, as `SessionRecorder` stores payloads: the
   * events, the new blobs to store with them, and every ref they name that is new.
   */
  #compact(events: NewEvent[]): { batch: NewEvent[]; blobs: string[]; refs: string[] } {
    const blobs = new Map<string, string>();
    const refs: string[] = [];
    const batch = events.map((event) => {
      if (event.payload === undefined) return event;
      const compact = this.#compactor.begin();
      const payload = compact.value(event.payload, { text: false });
      const result = compact.result();
      if (result.evidenceRefs.length === 0) return { ...event, payload };
      for (const [ref, content] of result.blobs) blobs.set(ref, content);
      refs.push(...result.evidenceRefs);
      return {
        ...event,
        payload,
        evidenceRefs: [...(event.evidenceRefs ?? []), ...result.evidenceRefs],
      };
    });
    return { batch, blobs: [...blobs.values()], refs };
  }

  #add(event: LedgerEvent): void {
    if (event.seq !== this.#next) return;
    this.#next += 1;
    if (event.type === DELETED_TYPE) this.events.length = 0;
    else this.events.push(event);
  }
}
