import { isoNow } from "../../events/clock.js";
import { ConflictError } from "../../events/errors.js";
import { assertId, uuidv7 } from "../../events/ids.js";
import type { RunHead } from "../../events/types.js";
import { assignCursors, EMPTY_HEAD } from "../../store/append-plan.js";
import { ClosingGate } from "../../store/closing-gate.js";
import type {
  AppendRequest,
  AppendResult,
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
import { expectedEventCount, retentionGraceMs } from "../../store/retention.js";
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
import { groupCommit, groupCommitAcrossSessions } from "./group-commit.js";
import { type CachedHead, type HeadAppend, HeadCache, planAtHead } from "./head-cache.js";
import { withRetries } from "./retry.js";
import { headOf, parseBody, runSummary, sessionSummary } from "./rows.js";
import { type BlobRow, blobRows, type SqlBackend } from "./sql-backend.js";
import { SqlBlobs } from "./sql-blobs.js";
import { ONCE, SqlCalls, WRITES } from "./sql-calls.js";
import {
  appendProgram,
  deleteSessionProgram,
  forkProgram,
  type WriteProgram,
} from "./write-program.js";

/**
 * The EventStore of every SQL dialect: validation, the shared write programs, retries and error
 * mapping live here once; a `SqlBackend` supplies the dialect's statements.
 */
export class SqlEventStore implements EventStore {
  readonly #backend: SqlBackend;
  readonly #heads = new HeadCache();
  readonly #atHead: ((append: HeadAppend) => Promise<number | undefined>) | undefined;
  readonly #gate: ClosingGate;
  readonly #calls: SqlCalls;
  readonly #blobs: SqlBlobs;

  protected constructor(backend: SqlBackend, name: string) {
    this.#backend = backend;
    this.#gate = new ClosingGate(name);
    this.#calls = new SqlCalls({ backend, name, closing: () => this.#gate.closing });
    this.#blobs = new SqlBlobs({ backend, calls: this.#calls });
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
      this.#calls.guard("init", () => this.#backend.init(checkedInitOptions(options))),
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
    return this.#gate.run("putBlob", () => this.#blobs.put(content, options));
  }

  putBlobs(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]> {
    return this.#gate.run("putBlobs", () => this.#blobs.putMany(contents, options));
  }

  getBlob(ref: string): Promise<Uint8Array> {
    return this.#gate.run("getBlob", () => this.#blobs.get(ref));
  }

  getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    return this.#gate.run("getBlobs", () => this.#blobs.getMany(refs));
  }

  deleteSession(sessionId: string, options?: DeleteSessionOptions): Promise<DeleteSessionResult> {
    return this.#gate.run("deleteSession", () => this.#deleteSession(sessionId, options));
  }

  collectBlobs(options?: CollectBlobsOptions): Promise<CollectBlobsResult> {
    return this.#gate.run("collectBlobs", () => this.#blobs.collect(options));
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
      if (kind === "unavailable") throw this.#calls.unavailable("append", error);
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
        if (kind !== "unique") return this.#calls.unavailable("append", error);
        const head = await this.#runHead({ sessionId, runId });
        return new ConflictError({ sessionId, runId, expectedSeq, actualSeq: head.length });
      },
    });
  }

  async #readRun(request: ReadRunRequest): Promise<EventPage> {
    validateReadRun(request);
    const from = request.fromSeq ?? 0;
    const bodies = await this.#calls.read("readRun", () =>
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
    const bodies = await this.#calls.read("readSession", () =>
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
    const rows = await this.#calls.read("listRuns", () => this.#backend.listRuns(sessionId));
    return rows.map(runSummary);
  }

  async #listSessions(request: ListSessionsRequest = {}): Promise<SessionPage> {
    validateListSessions(request);
    const limit = request.limit;
    const rows = await this.#calls.read("listSessions", () =>
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
    const row = await this.#calls.read("runHead", () =>
      this.#backend.runHead(request.sessionId, request.runId),
    );
    return row === undefined ? { ...EMPTY_HEAD } : headOf(row);
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
      fail: (error) => this.#calls.unavailable("deleteSession", error),
    });
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
    return this.#gate.close(() => this.#calls.guard("close", () => this.#backend.close(), ONCE));
  }
}
