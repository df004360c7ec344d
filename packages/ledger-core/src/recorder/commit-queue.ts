import {
  LedgerError,
  outcomeUnknown,
  StoreUnavailableError,
  wroteNothing,
} from "../events/errors.js";
import { uuidv7 } from "../events/ids.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { AppendRequest, EventStore } from "../store/event-store.js";

interface Pending {
  events: NewEvent[];
  /** Content the events name, stored with them (`AppendRequest.blobs`). */
  blobs: (Uint8Array | string)[] | undefined;
  resolve: (events: LedgerEvent[]) => void;
  reject: (error: unknown) => void;
}

/**
 * What reading the run back found of a batch whose append's outcome was unknown: `stored` holds
 * its events as stored, or is undefined when the run does not hold them (they were not written).
 * It must not throw.
 */
export type ReadBack = (
  sent: readonly NewEvent[],
  stored: readonly LedgerEvent[] | undefined,
) => void;

const RETRY_DELAYS_MS = [25, 150];

/** The last batch whose append may or may not have committed, and why it is not known. */
interface UnknownAppend {
  /** The events as sent (their ids fixed before the first try). */
  events: readonly NewEvent[];
  eventIds: string[];
  eventTypes: string[];
  /** The seq its first event was sent at. */
  fromSeq: number;
  /** What the append failed with (`store-unavailable`, or a driver's error). */
  error: unknown;
}

/** Refusals caused by one event's content: the store wrote nothing and names that event. */
const CALLER_ERRORS: ReadonlySet<string> = new Set([
  "invalid-event",
  "non-serializable",
  "duplicate-event",
]);

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
  /** The last batch whose append may or may not have committed. */
  #unknown: UnknownAppend | undefined;
  /** Settles once the queue is empty again (while a drain is running). */
  #drained: Promise<void> | undefined;
  #committed: ((events: readonly LedgerEvent[]) => void) | undefined;
  /** The read that settles `#unknown`, while it runs: callers that need it share one read. */
  #settling: Promise<void> | undefined;
  readonly #readBack: ReadBack | undefined;

  constructor(options: {
    store: EventStore;
    sessionId: string;
    runId: string;
    nextSeq: number;
    /**
     * Hears of every batch this queue commits, as stored and in seq order, before the callers'
     * promises settle (what a recorder keeps of its run to be reopened without reading it). It
     * must not throw: the batch is committed.
     */
    committed?: (events: readonly LedgerEvent[]) => void;
    /** Hears what reading the run back found of a batch whose append's outcome was unknown. */
    readBack?: ReadBack;
  }) {
    this.#store = options.store;
    this.#address = { sessionId: options.sessionId, runId: options.runId };
    this.#nextSeq = options.nextSeq;
    this.#committed = options.committed;
    this.#readBack = options.readBack;
  }

  /**
   * From now on, every batch committed is heard by `committed` instead (see the option): a
   * recorder that starts keeping its run while it writes (`replayAgain`).
   */
  listen(committed: ((events: readonly LedgerEvent[]) => void) | undefined): void {
    this.#committed = committed;
  }

  /** The run length this writer believes in (the next seq it will write). */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /**
   * Queues events that must be committed together, with the blobs they name that are to be
   * stored in the same append; resolves with the events as stored. An event without an
   * `eventId` is given one here (the object is updated).
   */
  commit(events: NewEvent[], blobs?: (Uint8Array | string)[]): Promise<LedgerEvent[]> {
    // Ids are fixed before the first try: a retry after a lost reply must send the same events,
    // or the store sees new ones at a position its first try already filled (`conflict`).
    for (const event of events) event.eventId ??= uuidv7();
    return new Promise((resolve, reject) => {
      this.#pending.push({ events, blobs, resolve, reject });
      if (!this.#draining) {
        this.#draining = true;
        // A microtask lets calls started in the same tick (parallel tool calls) join the batch.
        // (A resolved promise, not queueMicrotask: Node wraps the latter in an AsyncResource,
        // which costs more than the rest of the queue on every recorded call.)
        this.#drained = Promise.resolve().then(() => this.#drain());
      }
    });
  }

  /**
   * Settles once every event queued so far has been sent and its append has settled (committed
   * or refused): `nextSeq` is then the position the next append starts at.
   */
  async settled(): Promise<void> {
    // A drain settles every caller's promise itself: a failure of it is theirs, not this one's.
    while (this.#draining) await this.#drained?.catch(() => {});
  }

  /** Whether the last append's outcome is unknown (the run is read back before the next). */
  get unsure(): boolean {
    return this.#unknown !== undefined;
  }

  /**
   * Once every queued event is sent, reads the run back if the last append's outcome is
   * unknown, so `readBack` has heard whether its events are stored before the caller decides
   * what to write (a request retried after such a failure may already be in the ledger).
   * Rejects as a batch waiting behind that append would, when the read fails too.
   */
  async resolveUnknown(): Promise<void> {
    await this.settled();
    const unknown = this.#unknown;
    if (unknown === undefined) return;
    try {
      await this.#settleOnce(unknown);
    } catch (readError) {
      throw this.#stillUnknown(unknown, readError);
    }
  }

  #settleOnce(unknown: UnknownAppend): Promise<void> {
    this.#settling ??= this.#settleUnknown(unknown).finally(() => {
      this.#settling = undefined;
    });
    return this.#settling;
  }

  async #drain(): Promise<void> {
    try {
      while (this.#pending.length > 0) {
        const batch = this.#pending;
        this.#pending = [];
        await this.#send(batch);
      }
    } finally {
      this.#draining = false;
    }
  }

  async #send(batch: Pending[]): Promise<void> {
    // One call alone (a sequential agent's every call) sends its events as they are.
    const events =
      batch.length === 1 ? (batch[0] as Pending).events : batch.flatMap((item) => item.events);
    const blobs =
      batch.length === 1 ? (batch[0] as Pending).blobs : batch.flatMap((item) => item.blobs ?? []);
    if (this.#unknown !== undefined) {
      const unknown = this.#unknown;
      try {
        await this.#settleOnce(unknown);
      } catch (readError) {
        // Still unknown (the next batch reads the run back again): the callers hear of the
        // append that left it so, not of the read, which says nothing of their events.
        const failure = this.#stillUnknown(unknown, readError);
        for (const item of batch) item.reject(failure);
        return;
      }
    }
    try {
      const fromSeq = this.#nextSeq;
      const stored = await this.#appendWithRetry(events, blobs).catch((error: unknown) => {
        // After an unknown outcome the next batch finds out whether these events are in.
        if (outcomeUnknown(error))
          this.#unknown = {
            events,
            eventIds: events.map((event) => event.eventId as string),
            eventTypes: events.map((event) => event.type),
            fromSeq,
            error,
          };
        throw error;
      });
      this.#committed?.(stored);
      let offset = 0;
      for (const item of batch) {
        item.resolve(stored.slice(offset, offset + item.events.length));
        offset += item.events.length;
      }
    } catch (error) {
      // One caller's bad event (nothing was written) must not fail the calls it was batched
      // with: each caller's events are tried alone, so each sees its own outcome.
      if (batch.length > 1 && LedgerError.isInstance(error) && CALLER_ERRORS.has(error.code)) {
        for (const item of batch) await this.#send([item]);
        return;
      }
      for (const item of batch) item.reject(error);
    }
  }

  /**
   * Moves past a batch whose append outcome was unknown if the run holds exactly its events at
   * this writer's position. Anything else there was written by another process (a resumed
   * run): the position stays, so this writer's next append loses on `conflict` instead of
   * writing on top of the other's events. Either way the batch's events are then known to be
   * stored or not: `committed` hears them if they are, `readBack` in both cases.
   */
  async #settleUnknown({ events, eventIds }: UnknownAppend): Promise<void> {
    const page = await this.#store.readRun({
      ...this.#address,
      fromSeq: this.#nextSeq,
      limit: eventIds.length,
    });
    const ours =
      page.events.length === eventIds.length &&
      page.events.every((event, index) => event.eventId === eventIds[index]);
    if (ours) this.#nextSeq += eventIds.length;
    this.#unknown = undefined;
    if (ours) this.#committed?.(page.events);
    this.#readBack?.(events, ours ? page.events : undefined);
  }

  /**
   * What callers whose batch waits behind an unknown append hear when the read that would
   * settle it fails: that append's failure (`store-unavailable`, its driver error as `cause`),
   * saying which events it was and that their outcome is unknown; the read's error is kept in
   * `details.readError`. Their own events were not sent.
   */
  #stillUnknown(unknown: UnknownAppend, readError: unknown): StoreUnavailableError {
    const { sessionId, runId } = this.#address;
    const original = unknown.error;
    // A driver's own words may end with a full stop ("Connection lost: The server closed the
    // connection."): the sentence goes on.
    const message = (original instanceof Error ? original.message : String(original)).replace(
      /[.\s]+$/,
      "",
    );
    const cause = LedgerError.isInstance(original) ? (original.cause ?? original) : original;
    const last = unknown.fromSeq + unknown.eventIds.length - 1;
    const seq = last === unknown.fromSeq ? `seq ${last}` : `seq ${unknown.fromSeq}-${last}`;
    const types =
      unknown.eventTypes.length <= 4
        ? unknown.eventTypes.join(", ")
        : `${unknown.eventTypes.slice(0, 3).join(", ")} and ${unknown.eventTypes.length - 3} more`;
    const read = readError instanceof Error ? readError.message : String(readError);
    const error = new StoreUnavailableError(
      `${message}: whether the append of ${types} (${seq} of run ${runId} in session ${sessionId}) was written is unknown, and reading the run back to find out failed too (${read}); this call's events were not sent`,
      cause,
      // This call's own events never left: they can be sent again (an outcome recorded again).
      { nothingWritten: true },
    );
    Object.assign(error.details, {
      sessionId,
      runId,
      fromSeq: unknown.fromSeq,
      eventIds: unknown.eventIds,
      eventTypes: unknown.eventTypes,
      readError,
    });
    return error;
  }

  async #appendWithRetry(
    events: NewEvent[],
    blobs: (Uint8Array | string)[] | undefined,
  ): Promise<LedgerEvent[]> {
    // Whether an earlier attempt's outcome is unknown: then a last failure that wrote nothing
    // does not say the batch is not stored.
    let unknown = false;
    for (let attempt = 0; ; attempt++) {
      try {
        const request: AppendRequest = {
          sessionId: this.#address.sessionId,
          runId: this.#address.runId,
          expectedSeq: this.#nextSeq,
          events,
        };
        if (blobs !== undefined && blobs.length > 0) request.blobs = blobs;
        const result = await this.#store.append(request);
        const last = result.events[result.events.length - 1];
        if (last) this.#nextSeq = Math.max(this.#nextSeq, last.seq + 1);
        return result.events;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined || !LedgerError.isInstance(error, "store-unavailable")) {
          // A last try that sent nothing (no connection) says nothing of an earlier one's batch.
          if (unknown && wroteNothing(error))
            throw new StoreUnavailableError((error as Error).message, (error as Error).cause);
          throw error;
        }
        unknown ||= !wroteNothing(error);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
