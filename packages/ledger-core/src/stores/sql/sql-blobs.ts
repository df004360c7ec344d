import {
  type EncodedBlob,
  prepareBlob,
  prepareBlobs,
  putBlobSession,
  readBlob,
  readBlobs,
} from "../../store/blob.js";
import type {
  BlobTally,
  CollectBlobsOptions,
  CollectBlobsResult,
  PutBlobOptions,
} from "../../store/event-store.js";
import {
  blobGraceMs,
  collectAsIfDeleted,
  collectDryRun,
  collectResult,
} from "../../store/retention.js";
import { stopBeforeNextPage, stopSignal } from "../../store/stop-signal.js";
import { blobRows, type SqlBackend } from "./sql-backend.js";
import type { SqlCalls } from "./sql-calls.js";
import { BLOBS_PER_PAGE, type BlobPage, collectBlobsPage } from "./write-program.js";

/**
 * The blob operations of `SqlEventStore` (putBlob, putBlobs, getBlob, getBlobs, collectBlobs),
 * entered through the store's closing gate.
 */
export class SqlBlobs {
  readonly #backend: SqlBackend;
  readonly #calls: SqlCalls;

  constructor(options: { backend: SqlBackend; calls: SqlCalls }) {
    this.#backend = options.backend;
    this.#calls = options.calls;
  }

  async put(content: Uint8Array | string, options?: PutBlobOptions): Promise<string> {
    const sessionId = putBlobSession(options);
    const [ref] = await this.#putRows([prepareBlob(content)], true, sessionId, "$");
    return ref as string;
  }

  /**
   * Batch put (one statement). Durable together with the next append at the latest: on
   * SQLite the batch is committed without its own fsync and the next append's fsync covers
   * it (a writer that puts then appends; the recorder sends its blobs with the append).
   */
  async putMany(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]> {
    const sessionId = putBlobSession(options);
    return this.#putRows(prepareBlobs(contents), false, sessionId, undefined);
  }

  async #putRows(
    prepared: EncodedBlob[],
    durable: boolean,
    sessionId: string | undefined,
    /** The path of putBlob's one value; undefined for putBlobs' list (`$[i]`). */
    single: string | undefined,
  ): Promise<string[]> {
    const rows = blobRows(prepared, "$");
    // putBlob's one value is `$` itself, not the first of a list.
    if (single !== undefined) for (const row of rows) row.path = single;
    if (rows.length > 0)
      await this.#calls.guard("putBlob", () => this.#backend.putBlobs(rows, durable, sessionId));
    return prepared.map((blob) => blob.ref);
  }

  async get(ref: string): Promise<Uint8Array> {
    return readBlob(ref, async (known) => {
      const found = await this.#calls.read("getBlob", () => this.#backend.getBlobs([known]));
      return found.get(known);
    });
  }

  async getMany(refs: string[]): Promise<Map<string, Uint8Array>> {
    return readBlobs(refs, (unique) =>
      this.#calls.read("getBlobs", () => this.#backend.getBlobs(unique)),
    );
  }

  /**
   * Pages of `collectBlobsPage`, each its own transaction, until one comes back short. A page
   * is idempotent, so one that a deadlock or lock timeout rolled back runs again (READS); a
   * pass that fails part way has kept what its committed pages deleted, and the next pass
   * finds the rest.
   */
  async collect(options?: CollectBlobsOptions): Promise<CollectBlobsResult> {
    // Checked before the first page: refused options delete nothing.
    const graceMs = blobGraceMs(options);
    const dryRun = collectDryRun(options);
    const asIfDeleted = collectAsIfDeleted(options, dryRun);
    const signal = stopSignal(options?.signal);
    const found: BlobTally = { blobs: 0, bytes: 0 };
    let after: string | undefined;
    for (;;) {
      // Each page is its own transaction: stopped here, what it says it deleted is what is gone.
      if (await stopBeforeNextPage(signal)) return collectResult(dryRun, found, true);
      const from = after;
      const page: BlobPage = await this.#calls.guard("collectBlobs", () =>
        this.#backend.write(() => collectBlobsPage(from, graceMs, dryRun, asIfDeleted)),
      );
      found.blobs += page.deleted;
      found.bytes += page.bytes;
      if (page.last === undefined || page.examined < BLOBS_PER_PAGE)
        return collectResult(dryRun, found, false);
      after = page.last;
    }
  }
}
