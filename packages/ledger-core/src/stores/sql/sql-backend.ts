import type { EncodedBlob } from "../../store/blob.js";
import type { InitOptions, StoreDescription } from "../../store/event-store.js";
import type { HeadAppend } from "./head-cache.js";
import type { HeadRow, RunRow, SessionRow } from "./rows.js";
import type { WriteProgram } from "./write-program.js";

/** How a driver error should be handled. */
export type DriverErrorKind =
  /** A unique key was violated: a racing writer won; re-run the program to see its rows. */
  | "unique"
  /** Deadlock, serialization failure, lock timeout: the transaction was rolled back; re-run. */
  | "transient"
  /** Anything else (lost connection, server down): `store-unavailable`. */
  | "unavailable";

/**
 * A blob as `SqlEventStore` hands it to `putBlobs` or with an append, once per reference: its
 * reference and its stored (encoded, store/blob.ts) bytes. `path` names its first position in
 * the caller's list (`$[index]`, `$.blobs[index]`), the path of an error about this blob: MySQL
 * refuses one larger than max_allowed_packet.
 */
export interface BlobRow {
  ref: string;
  stored: Uint8Array;
  path: string;
}

/**
 * Each blob once (its first position names it), in ref order (every writer locks blob rows in
 * one order), for `putBlobs` or an append.
 */
export function blobRows(prepared: readonly EncodedBlob[], path: string): BlobRow[] {
  // Every append passes its blobs here, and most carry none.
  if (prepared.length === 0) return [];
  const rows = new Map<string, BlobRow>();
  for (let index = 0; index < prepared.length; index++) {
    const blob = prepared[index] as EncodedBlob;
    // Written out: { ...blob, path } (a property added after a spread) takes V8's slow path,
    // 1-2 µs a blob, and a recorded call that keeps content in blobs has several.
    if (!rows.has(blob.ref))
      rows.set(blob.ref, { ref: blob.ref, stored: blob.stored, path: `${path}[${index}]` });
  }
  return [...rows.values()].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
}

/**
 * What a dialect provides to `SqlEventStore`: one write transaction that executes the steps of
 * a shared write program, and plain reads. Rows come back with ids as strings and bodies as the
 * stored JSON text.
 */
export interface SqlBackend {
  /** Creates or upgrades the schema; with `create: false` a location without one is `not-found`. */
  init(options?: InitOptions): Promise<void>;
  /** Runs the program in one transaction: committed when it returns, rolled back if it throws. */
  write<T>(program: () => WriteProgram<T>): Promise<T>;
  /**
   * Optional: the append of a batch planned against a head the store cached, in ONE round trip
   * and atomically (head checked and moved, session counter bumped and held until commit, events
   * inserted with their cursors, the blobs it carries (`blobs`) stored, the blobs it names and
   * carries (`refs`) indexed for its session). Returns the session's new last cursor, or
   * undefined when nothing was written (stored head not `expected`, run not running, path
   * unsupported, blobs past what one statement carries): the store then runs the transactional
   * program. A driver error means nothing was written, or, for a lost connection, an unknown
   * outcome, exactly like `write`.
   */
  appendAtHead?(append: HeadAppend): Promise<number | undefined>;
  /**
   * Optional: several `appendAtHead`s (distinct runs of ONE session, or of several with
   * `batchesAcrossSessions`) in one round trip and one transaction, answering each as
   * `appendAtHead` would: its last cursor, or undefined when its stored head was not the
   * expected one. A driver error answers all of them. The store gathers concurrent appends into
   * it (group commit), and then calls only this one, for every at-head append, those that
   * name or carry blobs too: a backend that has it needs no `appendAtHead`.
   */
  appendAtHeads?(appends: HeadAppend[]): Promise<(number | undefined)[]>;
  /**
   * True when `appendAtHeads` also takes appends of several sessions at once (each session's
   * counter bumped once, all locks taken in one (session, run) order): the store then gathers
   * the concurrent appends of all its sessions, not of each session apart.
   */
  readonly batchesAcrossSessions?: boolean;
  /**
   * False once the backend knows its server lacks the one-round-trip path (MySQL, which has no
   * anonymous blocks): the store then plans no at-head append and sends every append to the
   * transactional program directly. Absent or true: the store tries the path.
   */
  appendsAtHead?(): boolean;
  classify(error: unknown): DriverErrorKind;
  /**
   * Optional: when `error` (one error of an "unavailable" one's causes) is the driver's own
   * word for a wait that passed a bound (a driver setting), what to say of it; undefined for
   * any other error. The store's own bound (a ServerTimeoutError) needs no backend to tell.
   */
  timeoutMessage?(error: Error): string | undefined;
  /**
   * Optional: true for a driver error that says the connection the statement went on was lost
   * (the server ended it, or it was reset), never for a statement the server refused or a wait
   * that passed a bound. A read that failed so is sent again (see retryRead); a write is not:
   * whether it committed is unknown, and the caller must hear of that.
   */
  lostConnection?(error: unknown): boolean;
  /**
   * True for a driver error after which the operation surely wrote nothing (SQLite: a
   * transaction refused for a full disk, a lock or a read-only file rolled back whole), so the
   * caller's `store-unavailable` says so. Absent or false: the outcome may be unknown.
   */
  wroteNothing?(error: unknown): boolean;
  /**
   * True for a driver error that says the database itself is damaged (SQLite: a malformed
   * file), which the store reports as `tamper-detected`, not as an outage to retry.
   */
  damaged?(error: unknown): boolean;
  runHead(sessionId: string, runId: string): Promise<HeadRow | undefined>;
  readRun(sessionId: string, runId: string, fromSeq: number, limit?: number): Promise<string[]>;
  readSession(sessionId: string, after: number, limit?: number): Promise<string[]>;
  /** Runs of a session in the order they were created. */
  listRuns(sessionId: string): Promise<RunRow[]>;
  /** Sessions with an id after `after`, in code-point order, at most `limit`. */
  listSessions(after: string | undefined, limit: number | undefined): Promise<SessionRow[]>;
  /**
   * Stores encoded blobs (store/blob.ts), in as few statements as the server takes: inserts the
   * new ones, and sets `touched_at` on every one (existing ones too: the retention grace period
   * starts again) to the database's clock in epoch ms, never the caller's: writers and the
   * process that runs retention may be on hosts whose clocks disagree.
   */
  putBlobs(
    blobs: BlobRow[],
    /** false: may become durable with the next append's commit (SQLite skips its own fsync). */
    durable: boolean,
    /**
     * The session the blobs are put for: their (blob, session) pairs go into the reference
     * index after the blobs, or in the same transaction. Claims first lost one to a
     * concurrent collectBlobs: committed while the blob was old and unclaimed by any live
     * session, the claim was deleted with the blob, and the put's blob statement then stored
     * the blob again, unclaimed. A blob stored first is fresh (inside the grace) until its
     * claim is there; a collectBlobs page that holds its row makes the put wait, and the
     * claim comes after that page's deletions.
     */
    sessionId: string | undefined,
  ): Promise<void>;
  /** Stored (encoded) bytes of the blobs found. */
  getBlobs(refs: string[]): Promise<Map<string, Uint8Array>>;
  describe(): StoreDescription;
  close(): Promise<void>;
}

/**
 * The first `code`/`errno` found on an error or its causes (drizzle wraps driver errors), or,
 * where none has one, the innermost cause: drizzle's own wrapper says only "Failed query:"
 * with the statement and its parameters (session ids, blob bytes), and the reason ("Cannot use
 * a pool after calling end") is in its cause.
 */
export function driverError(error: unknown): { code?: string; errno?: number; error: unknown } {
  let current: unknown = error;
  let innermost: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const candidate = current as { code?: unknown; errno?: unknown; cause?: unknown };
    if (typeof candidate.code === "string" || typeof candidate.errno === "number") {
      const found: { code?: string; errno?: number; error: unknown } = { error: current };
      if (typeof candidate.code === "string") found.code = candidate.code;
      if (typeof candidate.errno === "number") found.errno = candidate.errno;
      return found;
    }
    innermost = current;
    current = candidate.cause;
  }
  return { error: innermost };
}
