import type { LedgerEvent, NewEvent, RunHead, RunStatus } from "../events/types.js";

/** Arguments of `EventStore.append`. */
export interface AppendRequest {
  sessionId: string;
  runId: string;
  /** The run length the writer read (0 for a new run). */
  expectedSeq: number;
  events: NewEvent[];
  /**
   * Content the events name (their `evidenceRefs`), stored with them: each as `putBlobs` with
   * this session would store it (claimed by the session for retention). A store writes them in
   * the append's own commit where it can (memory, SQLite, PostgreSQL, MariaDB), so a recorded
   * call that keeps new content in blobs costs one round trip and one commit, not a put first.
   * Once the append returns they are stored; a deduplicated retry finds them stored by its
   * first try. A refused append (bad input, conflict, closed run) writes none of them, except
   * on Redis, whose blob keys live in other slots than the session's: there they are put
   * first, as `putBlobs` would (a refused append leaves them claimed by the session, which
   * retention collects with it).
   */
  blobs?: (Uint8Array | string)[];
}

/** Result of `EventStore.append`. */
export interface AppendResult {
  /** The committed events, as stored (with seq, commitCursor, hashes). */
  events: LedgerEvent[];
  /** True when every event was already stored with the same content: nothing was written. */
  deduplicated: boolean;
}

export interface ReadRunRequest {
  sessionId: string;
  runId: string;
  /** First seq to return (default 0). */
  fromSeq?: number;
  limit?: number;
}

export interface ReadSessionRequest {
  sessionId: string;
  /** Return events with `commitCursor > after` (default 0: from the start). */
  after?: number;
  limit?: number;
}

/** A page of events. `nextCursor` is the value to pass on (a seq for runs, a cursor for sessions). */
export interface EventPage {
  events: LedgerEvent[];
  nextCursor: number;
}

/** A run as `listRuns` reports it. */
export interface RunSummary {
  runId: string;
  parentRunId?: string;
  length: number;
  status: RunStatus;
  lastHash: string | null;
  /** `recordedAt` of its first event. */
  startedAt: string;
}

/** A session as `listSessions` reports it. */
export interface SessionSummary {
  sessionId: string;
  /** Number of events committed in the session (its last commit cursor). */
  eventCount: number;
  createdAt: string;
  updatedAt: string;
}

export interface ListSessionsRequest {
  /** Return sessions whose id sorts after this one. */
  after?: string;
  limit?: number;
}

export interface SessionPage {
  sessions: SessionSummary[];
  /** Pass as `after` for the next page; absent on the last page. */
  nextCursor?: string;
}

export interface ForkRequest {
  sessionId: string;
  runId: string;
  newRunId: string;
  /** Copy the events with `seq < uptoSeq` (the new run's length). */
  uptoSeq: number;
}

/** Options of `EventStore.putBlob` and `putBlobs`. */
export interface PutBlobOptions {
  /** The session whose next append names the blob (the recorder passes its own). */
  sessionId?: string;
}

/** Options of `EventStore.deleteSession`. */
export interface DeleteSessionOptions {
  /**
   * A blob written or re-put (`putBlob` refreshes its touched-at time) less than this many
   * milliseconds ago is kept even when no remaining session references it: a writer in
   * another session may have put it and be about to append the event that references it.
   * Measured on the database's clock (the memory store's: its process's), so writers on hosts
   * whose clocks disagree with the deleting process's are covered all the same.
   * Default `DEFAULT_BLOB_GRACE_MS` (10 minutes). `0` collects every unreferenced blob now
   * (only safe when nothing else is writing the same content).
   */
  blobGraceMs?: number;
  /**
   * Delete only if the session still holds this many events (its last commit cursor: the
   * `eventCount` that `listSessions` reported), checked under the lock the deletion takes: a
   * session written since the caller looked (an agent that came back to it, a run started in
   * it) is `conflict`, nothing deleted. What retention by age needs: the age it judged is the
   * age of what it deletes.
   */
  eventCount?: number;
}

/** What `deleteSession` removed. */
export interface DeleteSessionResult {
  sessionId: string;
  deletedEvents: number;
  deletedRuns: number;
  /** Blobs the session referenced that no other session references (and past the grace). */
  deletedBlobs: number;
  /** Blobs the session referenced that were kept: referenced elsewhere or inside the grace. */
  keptBlobs: number;
}

/** Options of `EventStore.collectBlobs`. */
export interface CollectBlobsOptions {
  /** As `DeleteSessionOptions.blobGraceMs`: a blob put (or re-put) within it is kept. */
  blobGraceMs?: number;
  /**
   * Stops the sweep between pages once aborted (a CLI's Ctrl-C): a page's deletions are one
   * unit, so what was deleted stays deleted and the result counts exactly that, with
   * `stopped: true`; the blobs not looked at yet are kept. Already aborted: nothing is deleted.
   * A turn of the event loop is taken before each page, so an abort from a signal handler is
   * seen even on a store whose calls complete synchronously (SQLite).
   */
  signal?: AbortSignal;
  /**
   * true: delete nothing, and count what the sweep would delete at this moment (`wouldDelete`).
   * It takes no lock that a writer waits on past one page's statement. Writers go on meanwhile,
   * so a pass right after may delete a few more (puts whose grace ran out) or fewer.
   */
  dryRun?: boolean;
  /**
   * Only with `dryRun`: sessions whose claims the count ignores, as if they had been deleted.
   * The count is then what deleting them and a pass right after would free, with the same
   * grace (what `agent-ledger prune --dry-run` reports). Ids of sessions that do not exist
   * change nothing.
   */
  asIfDeleted?: string[];
}

/** Blobs counted by a `collectBlobs` dry run, and the bytes the store keeps for them. */
export interface BlobTally {
  blobs: number;
  bytes: number;
}

/** What `collectBlobs` removed (or, with `dryRun`, would remove). */
export interface CollectBlobsResult {
  /** Blobs no existing session referenced, put before the grace period: deleted (0 in a dry run). */
  deletedBlobs: number;
  /**
   * Present with `dryRun`: the blobs a pass would have deleted, and the bytes the store keeps
   * for them (their stored form, deflated where that was smaller: what deleting them frees,
   * before the database's own overhead). Stopped by `signal`, the count of the pages looked at.
   */
  wouldDelete?: BlobTally;
  /**
   * Present when `signal` stopped the sweep before it had looked at every blob: `deletedBlobs`
   * is what was deleted until then, and a next pass may find more.
   */
  stopped?: true;
}

/** Options of `EventStore.init`. */
export interface InitOptions {
  /** false: where there is no ledger yet, fail with `not-found` instead of creating one. Default true. */
  create?: boolean;
  /**
   * false: never change the ledger's schema (Redis: its key layout). A ledger of an older
   * release is refused with `invalid-argument` at `$.upgrade` (`details: { found, reads }`,
   * the versions), left as it was: agents of that release may still write to it, and would
   * break, or write what this release cannot see, once it moved on. For tools that read (every
   * `agent-ledger` command but `upgrade`). A ledger at this version opens as with true.
   * Default true: `init()` upgrades.
   */
  upgrade?: boolean;
}

/** What a store says about itself, e.g. for `agent-ledger` and the README's durability table. */
export interface StoreDescription {
  kind: string;
  /** Where the data lives (a path or a URL without credentials). */
  location?: string;
  durability?: Record<string, string | number | boolean>;
}

/**
 * The store contract (§4). `runEventStoreConformance` from `@agent-ledger/core/testing` is its
 * executable definition: every implementation passes it unchanged.
 */
export interface EventStore {
  /**
   * Creates or upgrades the schema. Idempotent and safe when several processes race. With
   * `create: false` it only upgrades: where no ledger is yet it fails with `not-found`,
   * creating no table or key (a reading tool pointed at the wrong database leaves it as it
   * was). With `upgrade: false` it only creates: a ledger of an older release is refused
   * (`invalid-argument`, `$.upgrade`), nothing changed. Both false: it opens only a ledger
   * that is there at this version, and writes nothing.
   */
  init(options?: InitOptions): Promise<void>;
  /**
   * Appends a batch atomically (all or nothing) at `expectedSeq`. Retrying a batch that is
   * already stored returns it with `deduplicated: true`. Fails with `conflict`,
   * `duplicate-event`, `run-closed`, `invalid-event` or `non-serializable`, writing nothing.
   */
  append(request: AppendRequest): Promise<AppendResult>;
  readRun(request: ReadRunRequest): Promise<EventPage>;
  /** Events of a session in commit order, paged by `commitCursor`. */
  readSession(request: ReadSessionRequest): Promise<EventPage>;
  /** The session's runs, in the order they were created (their first event's commit cursor). */
  listRuns(sessionId: string): Promise<RunSummary[]>;
  listSessions(request?: ListSessionsRequest): Promise<SessionPage>;
  runHead(request: { sessionId: string; runId: string }): Promise<RunHead>;
  /** A new run that starts as a copy of a prefix of another (new event ids, new hash chain). */
  fork(request: ForkRequest): Promise<AppendResult>;
  /**
   * Stores content by sha256 and returns `sha256:<hex>`. Idempotent. With `sessionId`, the
   * blob counts as referenced by that session from the moment it is put, as when an event of
   * the session names it: retention collects it with the session even if the event that was
   * to name it never committed (the writer died between the put and the append).
   */
  putBlob(content: Uint8Array | string, options?: PutBlobOptions): Promise<string>;
  /** The bytes stored under a `sha256:<hex>` reference; `not-found` when absent. */
  getBlob(ref: string): Promise<Uint8Array>;
  /**
   * Optional batch form of `putBlob` (one round trip): the refs in input order. A store may
   * make the batch durable together with its next append rather than on its own (SQLite
   * skips the batch's fsync, PostgreSQL commits it with synchronous_commit off; the next
   * commit's WAL flush covers it): put, then append. To store blobs with the events that
   * name them in one commit, pass them as `AppendRequest.blobs` instead (the recorder does).
   */
  putBlobs?(contents: (Uint8Array | string)[], options?: PutBlobOptions): Promise<string[]>;
  /** Optional batch form of `getBlob`: the blobs found (absent refs are simply missing). */
  getBlobs?(refs: string[]): Promise<Map<string, Uint8Array>>;
  /**
   * Retention: removes a session whose runs are all closed — its events, runs, cursor and the
   * blobs no other session references (blob references are indexed from `evidenceRefs` at
   * append time). An open run is `invalid-argument` (naming the run), an unknown session
   * `not-found`; with `eventCount`, a session written since is `conflict`. Safe while other
   * sessions are written: see `DeleteSessionOptions.blobGraceMs`.
   */
  deleteSession(sessionId: string, options?: DeleteSessionOptions): Promise<DeleteSessionResult>;
  /**
   * Retention across the whole store: deletes every blob that no existing session references
   * (no event names it and it was not put for a session that exists) and that was not put
   * within the grace period, with the reference-index entries of sessions that are gone.
   * `deleteSession` collects a session's own blobs; this collects what it cannot see: a blob
   * put without a session and never named, or one put for a session while it was being
   * deleted. Safe while other sessions are written, on the same terms as `deleteSession`.
   */
  collectBlobs(options?: CollectBlobsOptions): Promise<CollectBlobsResult>;
  describe(): StoreDescription;
  close(): Promise<void>;
}
