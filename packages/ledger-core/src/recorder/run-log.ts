import type { BlobCache } from "../compact/resolve.js";
import type { LedgerEvent } from "../events/types.js";

const encoder = new TextEncoder();

/**
 * What a recorder made by `reopen` keeps of its run, so that it can be reopened in turn without
 * reading what it already holds: the run's events as it loaded them, those it committed since
 * (as stored, in seq order), and the content of every blob they name. Reopening resolves the
 * committed events with that content (`resolveEvents`, the resume's own reader, with nothing
 * left to fetch) and reads only the events another writer appended after them.
 */
export class RunLog {
  /** The run's events as loaded: resolved, or as stored for a recorder that loads them so. */
  readonly loaded: readonly LedgerEvent[];
  /** The blobs `loaded` names and what was made of them: the committed events resolve from it. */
  readonly #cache: BlobCache;
  readonly #written: LedgerEvent[] = [];
  /** The content of each blob committed since, by ref (encoded only when it is needed). */
  readonly #blobs = new Map<string, string>();

  constructor(loaded: readonly LedgerEvent[], cache: BlobCache) {
    this.loaded = loaded;
    this.#cache = cache;
  }

  /** Notes events the recorder committed (the commit queue's `committed`). */
  wrote(events: readonly LedgerEvent[]): void {
    for (const event of events) this.#written.push(event);
  }

  /** Notes the content of blobs the recorder committed, by ref. */
  wroteBlobs(blobs: ReadonlyMap<string, string>): void {
    for (const [ref, content] of blobs) this.#blobs.set(ref, content);
  }

  /**
   * The events committed since the run was loaded, when they are all of the run from there up
   * to `length` (the recorder's next seq); undefined when some are missing (an append whose
   * outcome was unknown and that another batch found stored).
   */
  writtenUpTo(length: number): LedgerEvent[] | undefined {
    const from = this.loaded.length;
    if (from + this.#written.length !== length) return undefined;
    for (let index = 0; index < this.#written.length; index++)
      if ((this.#written[index] as LedgerEvent).seq !== from + index) return undefined;
    return this.#written.slice();
  }

  /**
   * The events committed since the run was loaded, when they follow it without a gap (none
   * missing, such as an append whose outcome was unknown); undefined otherwise.
   */
  writtenSoFar(): LedgerEvent[] | undefined {
    return this.writtenUpTo(this.loaded.length + this.#written.length);
  }

  /**
   * The cache with the content of every blob committed since: resolving the committed events
   * then fetches nothing (a blob some other writer put is fetched, as a resume would).
   */
  cache(): BlobCache {
    const cache = this.#cache;
    for (const [ref, content] of this.#blobs)
      if (!cache.bytes.has(ref)) cache.bytes.set(ref, encoder.encode(content));
    return cache;
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
