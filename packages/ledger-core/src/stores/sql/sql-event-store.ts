import { isoNow } from "../../events/clock.js";
import { ConflictError, LedgerError, StoreUnavailableError } from "../../events/errors.js";
import { assertId, uuidv7 } from "../../events/ids.js";
import type { RunHead } from "../../events/types.js";
import { assignCursors, EMPTY_HEAD } from "../../store/append-plan.js";
import {
  type EncodedBlob,
  prepareBlob,
  prepareBlobs,
  putBlobSession,
  readBlob,
  readBlobs,
} from "../../store/blob.js";
import { ClosingGate } from "../../store/closing-gate.js";
import type {
  AppendRequest,
  AppendResult,
  BlobTally,
  CollectBlobsOptions,
  CollectBlobsResult,
  DeleteSessionOptions,
  DeleteSessionResult,
  EventPage,
  EventStore,
  ForkRequest,
  InitOptions,
  ListSessionsRequest,
  PutBlobOptions,
  ReadRunRequest,
  ReadSessionRequest,
  RunSummary,
  SessionPage,
  StoreDescription,
} from "../../store/event-store.js";
import { checkedInitOptions } from "../../store/init-options.js";
import {
  blobGraceMs,
  collectAsIfDeleted,
  collectDryRun,
  collectResult,
  expectedEventCount,
  retentionGraceMs,
} from "../../store/retention.js";
import { stopBeforeNextPage, stopSignal } from "../../store/stop-signal.js";
import {
  assertRunAddress,
  type ValidAppend,
  validateAppend,
  validateFork,
  validateListSessions,
  validateReadRun,
  validateReadSession,
} from "../../store/validate.js";
import { WriteCoalescer } from "../../store/write-coalescer.js";
import { retryRead } from "../read-retry.js";
import { timeoutIn } from "../server-timeout.js";
import { type CachedHead, type HeadAppend, HeadCache, planAtHead } from "./head-cache.js";
import { type RetryPolicy, withRetries } from "./retry.js";
import { headOf, parseBody, runSummary, sessionSummary } from "./rows.js";
import { type BlobRow, blobRows, driverError, type SqlBackend } from "./sql-backend.js";
import {
  appendProgram,
  BLOBS_PER_PAGE,
  type BlobPage,
  collectBlobsPage,
  deleteSessionProgram,
  forkProgram,
  type WriteProgram,
} from "./write-program.js";

/** Operations that write in one transaction, so a refused one wrote nothing at all. */
const ONE_TRANSACTION = new Set(["append", "fork", "deleteSession"]);

/**
 * Write programs run again after a unique violation as after a rolled-back transaction: a racing
 * writer committed first (two writers creating one run, say), and the re-run sees its rows.
 */
const WRITES: RetryPolicy = ["unique", "transient"];

/**
 * Reads, putBlob's idempotent upsert and the migration run again after a transient failure
 * (serialization failure, deadlock, lock timeout), which rolled back whatever it was in: on a
 * pool whose transactions are SERIALIZABLE, PostgreSQL cancels even a lone SELECT that read what
 * concurrent appends wrote.
 */
const READS: RetryPolicy = ["transient"];

/** close() runs once: it rolls nothing back, and a pool refuses a second end(). */
const ONCE: RetryPolicy = [];

/**
 * Group commit across runs (backends with `appendAtHeads`), per session: at most two statements
 * of one session run at once (the second is sent while the first holds the session's cursor
 * row), and the appends that arrive meanwhile go out together. Sessions never wait for each
 * other. Measured with 8 writers (bench/README.md): on one session, 1.3-1.7x the throughput of
 * a statement per append on PostgreSQL; on 8 sessions unchanged, where a store-wide limit lost
 * 5-10% by holding back statements that did not contend.
 */
const groupCommit = {
  key: (append: HeadAppend) => append.sessionId,
  maxInFlight: 2,
  maxBatch: 64,
};

/**
 * Group commit across sessions (backends with `batchesAcrossSessions`): up to four statements
 * of the whole store run at once, each with at most a quarter of the appends running and
 * waiting (`balanced`), and the appends of any session that arrive on one turn of the event
 * loop go out together. Measured on MariaDB with 8 writers on 8 sessions (bench/README.md): a
 * statement per session's append spent more client and server CPU per event than the 8 raw
 * writers on this two-core machine (median ratio 0.59-0.61x); gathered across sessions,
 * 0.72-0.75x with up to eight statements; balanced over four, 0.75-0.83x against 0.60-0.73x
 * for eight unbalanced in the same processes. The price: a statement waits for the locks of
 * all its sessions, so an append to a session another process holds (a long `deleteSession`,
 * say) also holds back the appends that went out with it, until that lock is released or the
 * server's lock wait times out (then each is written on its own).
 */
const groupCommitAcrossSessions = {
  key: () => "",
  maxInFlight: 4,
  maxBatch: 64,
  balanced: true,
};

/**
 * The EventStore of every SQL dialect: validation, the shared write programs, retries and error
 * mapping live here once; a `SqlBackend` supplies the dialect's statements.
 */
export class SqlEventStore implements EventStore {
  readonly #backend: SqlBackend;
  readonly #name: string;
  readonly #heads = new HeadCache();
  readonly #atHead: ((append: HeadAppend) => Promise<number | undefined>) | undefined;
  readonly #gate: ClosingGate;

  protected constructor(backend: SqlBackend, name: string) {
    this.#backend = backend;
    this.#name = name;
    this.#gate = new ClosingGate(name);
    const many = backend.appendAtHeads?.bind(backend);
    if (many !== undefined) {
      const coalescer = new WriteCoalescer(
        many,
        backend.batchesAcrossSessions === true ? groupCommitAcrossSessions : groupCommit,
      );
      this.#atHead = (append) => coalescer.submit(append);
    } else this.#atHead = backend.appendAtHead?.bind(backend);
  }

  init(options?: InitOptions): Promise<void> {
    return this.#gate.run("init", () =>
      this.#guard("init", () => this.#backend.init(checkedInitOptions(options))),
    );
  }

  // Every operation goes through the closing gate (ClosingGate), entered as it is called.
  append(request: AppendRequest): Promise<AppendResult> {
    return this.#gate.run("append", () => this.#append(request));
  }

  fork(request: ForkRequest): Promise<AppendResult> {
    return this.#gate.run("fork", () => this.#fork(request));
  }

  readRun(request: ReadRunRequest): Promise<EventPage> {
    return this.#gate.run("readRun", () => this.#readRun(request));
  }

  readSession(request: ReadSessionRequest): Promise<EventPage> {
    return this.#gate.run("readSession", () => this.#readSession(request));
  }

  listRuns(sessionId: string): Promise<RunSummary[]> {
    return this.#gate.run("listRuns", () => this.#listRuns(sessionId));
  }

  listSessions(request: ListSessionsRequest = {}): Promise<SessionPage> {
    return this.#gate.run("listSessions", () => this.#listSessions(request));
  }

  runHead(request: { sessionId: string; runId: string }): Promise<RunHead> {
    return this.#gate.run("runHead", () => this.#runHead(request));
  }

  putBlob(content: Uint8Array | string, options?: PutBlobOptions): Promise<string> {
    return this.#gate.run("putBlob", () => this.#putBlob(content, options));
  }

  putBlobs(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]> {
    return this.#gate.run("putBlobs", () => this.#putBlobs(contents, options));
  }

  getBlob(ref: string): Promise<Uint8Array> {
    return this.#gate.run("getBlob", () => this.#getBlob(ref));
  }

  getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    return this.#gate.run("getBlobs", () => this.#getBlobs(refs));
  }

  deleteSession(sessionId: string, options?: DeleteSessionOptions): Promise<DeleteSessionResult> {
    return this.#gate.run("deleteSession", () => this.#deleteSession(sessionId, options));
  }

  collectBlobs(options?: CollectBlobsOptions): Promise<CollectBlobsResult> {
    return this.#gate.run("collectBlobs", () => this.#collectBlobs(options));
  }

  async #append(request: AppendRequest): Promise<AppendResult> {
    const valid = validateAppend(request);
    const { sessionId, runId } = valid;
    const blobs = blobRows(valid.blobs, "$.blobs");
    // The entry is dropped before writing: a failure or an unknown outcome leaves none, and
    // only a success puts one back.
    const cached = this.#heads.get(sessionId, runId);
    this.#heads.forget(sessionId, runId);
    const fast = cached === undefined ? undefined : await this.#appendAtHead(valid, cached, blobs);
    if (fast !== undefined && fast !== "check") {
      this.#heads.remember(sessionId, runId, fast);
      return fast;
    }
    const result = await this.#write(
      (attempt) =>
        appendProgram(valid, isoNow(), {
          checkExisting: attempt > 1 || fast === "check",
          blobs,
        }),
      sessionId,
      runId,
      valid.expectedSeq,
    );
    this.#heads.remember(sessionId, runId, result);
    return result;
  }

  /**
   * The one-round-trip path (backends that have it) for a writer that continues the run where
   * this store's own last append left it, the common case of a recorder. Undefined when it
   * wrote nothing (stale head, closed run...), `"check"` after a unique violation (an id used
   * elsewhere): the transactional program then gives the exact answer.
   */
  async #appendAtHead(
    valid: ValidAppend,
    cached: CachedHead,
    blobs: BlobRow[],
  ): Promise<AppendResult | "check" | undefined> {
    if (this.#atHead === undefined || this.#backend.appendsAtHead?.() === false) return undefined;
    const planned = planAtHead(valid, cached, isoNow(), blobs);
    if (planned === undefined) return undefined;
    let last: number | undefined;
    try {
      last = await this.#atHead(planned.append);
    } catch (error) {
      const kind = this.#backend.classify(error);
      if (kind === "unavailable") throw this.#unavailable("append", error);
      return kind === "unique" ? "check" : undefined;
    }
    if (last === undefined) return undefined;
    const count = planned.planned.length;
    return { events: assignCursors(planned.planned, last - count + 1), deduplicated: false };
  }

  async #fork(request: ForkRequest): Promise<AppendResult> {
    validateFork(request);
    return this.#write(
      () => forkProgram(request, isoNow(), uuidv7),
      request.sessionId,
      request.newRunId,
      0,
    );
  }

  /**
   * Runs a write program (WRITES): after a unique violation the re-run sees the winner's rows,
   * and `planAppend` gives the exact answer (conflict, deduplicated, duplicate-event). Writers
   * that keep racing past the last attempt get a conflict with the head as it then is.
   */
  #write(
    program: (attempt: number) => WriteProgram<AppendResult>,
    sessionId: string,
    runId: string,
    expectedSeq: number,
  ): Promise<AppendResult> {
    return withRetries({
      run: (attempt) => this.#backend.write(() => program(attempt)),
      classify: (error) => this.#backend.classify(error),
      retry: WRITES,
      fail: async (error, kind) => {
        if (kind !== "unique") return this.#unavailable("append", error);
        const head = await this.#runHead({ sessionId, runId });
        return new ConflictError({ sessionId, runId, expectedSeq, actualSeq: head.length });
      },
    });
  }

  async #readRun(request: ReadRunRequest): Promise<EventPage> {
    validateReadRun(request);
    const from = request.fromSeq ?? 0;
    const bodies = await this.#read("readRun", () =>
      this.#backend.readRun(request.sessionId, request.runId, from, request.limit),
    );
    const events = bodies.map((body, index) =>
      parseBody(body, () => ({
        sessionId: request.sessionId,
        runId: request.runId,
        seq: from + index,
      })),
    );
    return { events, nextCursor: from + bodies.length };
  }

  async #readSession(request: ReadSessionRequest): Promise<EventPage> {
    validateReadSession(request);
    const after = request.after ?? 0;
    const bodies = await this.#read("readSession", () =>
      this.#backend.readSession(request.sessionId, after, request.limit),
    );
    // Cursors are gap-free: the body at `index` is the event at cursor after + index + 1.
    const events = bodies.map((body, index) =>
      parseBody(body, () => ({ sessionId: request.sessionId, commitCursor: after + index + 1 })),
    );
    return { events, nextCursor: events[events.length - 1]?.commitCursor ?? after };
  }

  async #listRuns(sessionId: string): Promise<RunSummary[]> {
    assertId(sessionId, "$.sessionId");
    const rows = await this.#read("listRuns", () => this.#backend.listRuns(sessionId));
    return rows.map(runSummary);
  }

  async #listSessions(request: ListSessionsRequest = {}): Promise<SessionPage> {
    validateListSessions(request);
    const limit = request.limit;
    const rows = await this.#read("listSessions", () =>
      this.#backend.listSessions(request.after, limit === undefined ? undefined : limit + 1),
    );
    const sessions = rows.slice(0, limit ?? rows.length).map(sessionSummary);
    const page: SessionPage = { sessions };
    if (limit !== undefined && rows.length > limit && sessions.length > 0)
      page.nextCursor = sessions[sessions.length - 1]?.sessionId as string;
    return page;
  }

  async #runHead(request: { sessionId: string; runId: string }): Promise<RunHead> {
    assertRunAddress(request);
    const row = await this.#read("runHead", () =>
      this.#backend.runHead(request.sessionId, request.runId),
    );
    return row === undefined ? { ...EMPTY_HEAD } : headOf(row);
  }

  async #putBlob(content: Uint8Array | string, options?: PutBlobOptions): Promise<string> {
    const sessionId = putBlobSession(options);
    const [ref] = await this.#putRows([prepareBlob(content)], true, sessionId, "$");
    return ref as string;
  }

  /**
   * Batch put (one statement). Durable together with the next append at the latest: on
   * SQLite the batch is committed without its own fsync and the next append's fsync covers
   * it (a writer that puts then appends; the recorder sends its blobs with the append).
   */
  async #putBlobs(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]> {
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
      await this.#guard("putBlob", () => this.#backend.putBlobs(rows, durable, sessionId));
    return prepared.map((blob) => blob.ref);
  }

  async #getBlob(ref: string): Promise<Uint8Array> {
    return readBlob(ref, async (known) => {
      const found = await this.#read("getBlob", () => this.#backend.getBlobs([known]));
      return found.get(known);
    });
  }

  async #getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    return readBlobs(refs, (unique) =>
      this.#read("getBlobs", () => this.#backend.getBlobs(unique)),
    );
  }

  async #deleteSession(
    sessionId: string,
    options: DeleteSessionOptions = {},
  ): Promise<DeleteSessionResult> {
    const graceMs = retentionGraceMs(sessionId, options);
    const eventCount = expectedEventCount(options);
    return withRetries({
      run: () => this.#backend.write(() => deleteSessionProgram(sessionId, graceMs, eventCount)),
      classify: (error) => this.#backend.classify(error),
      retry: WRITES,
      fail: (error) => this.#unavailable("deleteSession", error),
    });
  }

  /**
   * Pages of `collectBlobsPage`, each its own transaction, until one comes back short. A page
   * is idempotent, so one that a deadlock or lock timeout rolled back runs again (READS); a
   * pass that fails part way has kept what its committed pages deleted, and the next pass
   * finds the rest.
   */
  async #collectBlobs(options?: CollectBlobsOptions): Promise<CollectBlobsResult> {
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
      const page: BlobPage = await this.#guard("collectBlobs", () =>
        this.#backend.write(() => collectBlobsPage(from, graceMs, dryRun, asIfDeleted)),
      );
      found.blobs += page.deleted;
      found.bytes += page.bytes;
      if (page.last === undefined || page.examined < BLOBS_PER_PAGE)
        return collectResult(dryRun, found, false);
      after = page.last;
    }
  }

  describe(): StoreDescription {
    return this.#backend.describe();
  }

  /** A dialect's own operation (SQLite's file check), refused after close() as every other. */
  protected whileOpen<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return this.#gate.run(operation, run);
  }

  /** See ClosingGate: an application's pool or database stays open. */
  close(): Promise<void> {
    return this.#gate.close(() => this.#guard("close", () => this.#backend.close(), ONCE));
  }

  /**
   * Runs a read as #guard does, sent again on another connection when its own was lost under
   * it (retryRead; the backend tells such a failure), never when it passed a bound.
   */
  #read<T>(operation: string, run: () => Promise<T>): Promise<T> {
    return this.#guard(operation, () =>
      retryRead({
        read: run,
        lostConnection: (error) =>
          this.#backend.lostConnection?.(error) === true &&
          timeoutIn(error, (cause) => this.#backend.timeoutMessage?.(cause)) === undefined,
        closing: () => this.#gate.closing,
      }),
    );
  }

  /**
   * Runs a read, an idempotent write (putBlob's upsert, a page of collectBlobs) or the
   * migration (READS), mapping the driver error it gives up on to `store-unavailable`.
   */
  #guard<T>(operation: string, run: () => Promise<T>, retry = READS): Promise<T> {
    return withRetries({
      run,
      classify: (error) => this.#backend.classify(error),
      retry,
      fail: (error) => this.#unavailable(operation, error),
    });
  }

  /**
   * `store-unavailable` for a driver error the store gives up on, the driver error as `cause`.
   * A wait that passed the store's bound says so (a driver's own words for it rarely do).
   */
  #unavailable(operation: string, error: unknown): LedgerError {
    if (this.#backend.damaged?.(error) === true) {
      const cause = driverError(error).error;
      return new LedgerError(
        "tamper-detected",
        `${this.#name} ${operation} failed: the database is damaged (${cause instanceof Error ? cause.message : String(cause)}). Waiting will not mend it: restore the file from a backup, or recover what is readable into a new file (sqlite3 <file> ".recover" | sqlite3 <new file>) and check it with agent-ledger verify`,
        { cause },
      );
    }
    const timeout = timeoutIn(error, (cause) => this.#backend.timeoutMessage?.(cause));
    if (timeout !== undefined)
      return new StoreUnavailableError(
        `${this.#name} ${operation} failed: ${timeout.message}`,
        timeout.error,
      );
    const cause = driverError(error).error;
    const message = cause instanceof Error ? cause.message : String(cause);
    // Only of an operation that is one transaction: a paged one (collectBlobs, putBlobs in
    // chunks) may have committed pages before the one refused.
    const nothingWritten =
      ONE_TRANSACTION.has(operation) && this.#backend.wroteNothing?.(error) === true;
    return new StoreUnavailableError(`${this.#name} ${operation} failed: ${message}`, cause, {
      nothingWritten,
    });
  }
}
