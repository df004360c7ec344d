import type { BlobCache } from "../compact/resolve.js";
import type { JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";

const encoder = new TextEncoder();

/**
 * What a log may hold, as `RunLog` measures it, before the recorder stops keeping it. The log
 * spares a reopen (or `replayAgain`) the read of the run; past 32 MiB that read is worth doing
 * again: it takes well under a second from any store, once per pause or failure (moments a
 * person or a framework waits on anyway), whereas the log is held for the life of the run by
 * every recorder a server keeps (one per long-lived run): at 32 MiB each, dozens of such runs
 * still fit in Node's default heap (2 to 4 GiB on 64-bit), beside the replays their reopens
 * hold. Most runs stay under it (with compaction a conversation stores each message once) and
 * keep their run as before.
 */
export const RUN_LOG_BUDGET_BYTES = 32 * 1024 * 1024;

let budgetBytes = RUN_LOG_BUDGET_BYTES;

/**
 * Makes the logs made from now on hold at most `bytes`; returns what puts the default back.
 * For tests: the package does not export it, since the budget trades memory for reads and
 * changes nothing else a recorder does.
 */
export function setRunLogBudget(bytes: number): () => void {
  budgetBytes = bytes;
  return () => {
    budgetBytes = RUN_LOG_BUDGET_BYTES;
  };
}

/**
 * An event as held, but its payload: ids, hashes, time, actor, evidence refs. An estimate, so
 * that measuring an event never serializes it.
 */
const ENVELOPE_BYTES = 512;

/**
 * About the JSON length of `value`: string lengths, keys and punctuation, nothing built. Walked
 * only on payloads as stored, where compaction left markers in place of large content (with
 * `compact: false` the content is inline, and a long string is measured at once).
 */
function jsonSize(value: JsonValue | undefined): number {
  if (typeof value === "string") return value.length + 2;
  if (value === null || typeof value !== "object") return 8;
  let size = 2;
  if (Array.isArray(value)) for (const item of value) size += jsonSize(item) + 1;
  else for (const key of Object.keys(value)) size += key.length + 4 + jsonSize(value[key]);
  return size;
}

/**
 * The size of `events` as stored (not resolved: a resolved payload holds the content of its
 * blobs, which a log counts once, as blobs).
 */
export function storedSize(events: readonly LedgerEvent[]): number {
  let size = 0;
  for (const event of events) size += ENVELOPE_BYTES + jsonSize(event.payload);
  return size;
}

/** A run as a log keeps it, complete up to where the recorder writes next. */
export interface KeptRun {
  /** The run as loaded (resolved, unless the recorder reads its run as stored). */
  loaded: readonly LedgerEvent[];
  /** The events committed since, as stored, in seq order. */
  written: LedgerEvent[];
  /** What the committed events resolve from: it holds the content of every blob they put. */
  cache: BlobCache;
  /** `storedSize` of `loaded` and `written`, for the log that continues this one. */
  storedBytes: number;
}

/**
 * What a recorder made by `reopen` keeps of its run, so that it can be reopened in turn without
 * reading what it already holds: the run's events as it loaded them, those it committed since
 * (as stored, in seq order), and the content of every blob they name. Reopening resolves the
 * committed events with that content (`resolveEvents`, the resume's own reader, with nothing
 * left to fetch) and reads only the events another writer appended after them.
 *
 * It holds at most the budget (`RUN_LOG_BUDGET_BYTES`), measured as the stored size of its
 * events and the content of its blobs, each counted once (the resolver's decoded forms beside
 * them are shared with the resolved events a replay holds). A log that would hold more is not
 * kept (`keep`), or is dropped once it does: it then lets go of everything it held and answers
 * no run (`keptUpTo`), so its recorder's next reopen or `replayAgain` reads the whole run, as
 * that of a recorder that keeps none does. The budget counts what the log was made with too:
 * each reopen makes the next log of everything the last one held.
 */
export class RunLog {
  #loaded: readonly LedgerEvent[];
  /** The blobs `loaded` names and what was made of them: the committed events resolve from it. */
  #cache: BlobCache | undefined;
  #written: LedgerEvent[] = [];
  /** The content of each blob committed since, by ref (encoded into the cache when needed). */
  #blobs = new Map<string, string>();
  #storedBytes: number;
  #heldBytes: number;
  readonly #budgetBytes: number;

  private constructor(
    loaded: readonly LedgerEvent[],
    cache: BlobCache,
    storedBytes: number,
    heldBytes: number,
  ) {
    this.#loaded = loaded;
    this.#cache = cache;
    this.#storedBytes = storedBytes;
    this.#heldBytes = heldBytes;
    this.#budgetBytes = budgetBytes;
  }

  /**
   * A log of the run as loaded (`storedBytes`: the `storedSize` of its events), with the blobs
   * in `cache`; undefined when that is over the budget already: the recorder then keeps none.
   */
  static keep(
    loaded: readonly LedgerEvent[],
    cache: BlobCache,
    storedBytes: number,
  ): RunLog | undefined {
    let held = storedBytes;
    for (const bytes of cache.bytes.values()) held += bytes.byteLength;
    return held > budgetBytes ? undefined : new RunLog(loaded, cache, storedBytes, held);
  }

  /** What the log holds, as it measures it (0 once dropped). */
  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Notes events the recorder committed (the commit queue's `committed`). */
  wrote(events: readonly LedgerEvent[]): void {
    if (this.#cache === undefined) return;
    const size = storedSize(events);
    this.#storedBytes += size;
    this.#heldBytes += size;
    for (const event of events) this.#written.push(event);
    this.#keepWithinBudget();
  }

  /** Notes the content of blobs the recorder committed, by ref. */
  wroteBlobs(blobs: ReadonlyMap<string, string>): void {
    const cache = this.#cache;
    if (cache === undefined) return;
    for (const [ref, content] of blobs) {
      if (this.#blobs.has(ref) || cache.bytes.has(ref)) continue;
      this.#blobs.set(ref, content);
      this.#heldBytes += content.length;
    }
    this.#keepWithinBudget();
  }

  /**
   * The run as kept, when the events committed since it was loaded are all of it from there up
   * to `length` (the recorder's next seq); undefined when some are missing (an append whose
   * outcome was unknown and that another batch found stored), or once the log was dropped.
   */
  keptUpTo(length: number): KeptRun | undefined {
    const cache = this.#cache;
    if (cache === undefined) return undefined;
    const from = this.#loaded.length;
    if (from + this.#written.length !== length) return undefined;
    for (let index = 0; index < this.#written.length; index++)
      if ((this.#written[index] as LedgerEvent).seq !== from + index) return undefined;
    // Committed events then resolve with nothing to fetch (a blob some other writer put is
    // fetched, as a resume would). The content moves: the cache holds it once, as bytes.
    for (const [ref, content] of this.#blobs)
      if (!cache.bytes.has(ref)) cache.bytes.set(ref, encoder.encode(content));
    this.#blobs.clear();
    return {
      loaded: this.#loaded,
      written: this.#written.slice(),
      cache,
      storedBytes: this.#storedBytes,
    };
  }

  /**
   * The run as kept, when the events committed since it was loaded follow it without a gap
   * (none missing, such as an append whose outcome was unknown); undefined otherwise, or once
   * the log was dropped.
   */
  keptSoFar(): KeptRun | undefined {
    return this.keptUpTo(this.#loaded.length + this.#written.length);
  }

  /**
   * Drops the log once it holds more than the budget: only references are let go of (the cache
   * and the events may be shared with a replay being made), and it notes nothing from then on.
   */
  #keepWithinBudget(): void {
    if (this.#heldBytes <= this.#budgetBytes) return;
    this.#cache = undefined;
    this.#loaded = [];
    this.#written = [];
    this.#blobs = new Map();
    this.#storedBytes = 0;
    this.#heldBytes = 0;
  }
}

/**
 * Drops from `cache` the materialized message lists but the one the next request extends
 * (`keep`): each is a whole conversation, one per request, and the resolved events hold their
 * own copies. A list met again is rebuilt from its nodes, which stay in the cache.
 */
export function keepOneList(cache: BlobCache, keep: string | undefined): void {
  for (const ref of cache.lists.keys()) if (ref !== keep) cache.lists.delete(ref);
}
