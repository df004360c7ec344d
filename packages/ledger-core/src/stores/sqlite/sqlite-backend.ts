import type Database from "better-sqlite3";
import { and, asc, eq, gt, gte } from "drizzle-orm";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { bufferOf } from "../../store/blob.js";
import type { InitOptions, StoreDescription } from "../../store/event-store.js";
import type { HeadAppend } from "../sql/head-cache.js";
import { MIGRATION_WAIT_MS, pendingMigrations } from "../sql/migrations.js";
import { type HeadRow, parseBody, type RunRow, type SessionRow } from "../sql/rows.js";
import type { DriverErrorKind, SqlBackend } from "../sql/sql-backend.js";
import { driverError } from "../sql/sql-backend.js";
import { type BlobPage, runSync, type WriteProgram, type WriteStep } from "../sql/write-program.js";
import { decodeBody, encodeBody } from "./body-codec.js";
import { events } from "./schema.js";
import { SqliteConnection, type SqliteConnectionOptions } from "./sqlite-connection.js";
import type { ConnectionHeads } from "./sqlite-heads.js";

/**
 * Now on SQLite's clock (the host's), in epoch ms: blob put times and the retention grace use
 * it, the same for every process on the file whatever its own idea of the time.
 */
const epochMs = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)";

type Statement = Database.Statement<unknown[], unknown>;

interface ReadStatements {
  head: Statement;
  runs: Statement;
  sessions: Statement;
}

/** A run's row with its last event (seq and stored body; null when the run has none). */
interface RunWithLast {
  status: string;
  closedLength: number | null;
  closedHash: string | null;
  seq: number | null;
  body: unknown;
}

/**
 * A run's head: a closed run's is the one written into its row at close (so a tail deleted
 * later shows as a mismatch in `verifyRun`), an open run's is its last event's.
 */
function headRow(row: RunWithLast, sessionId: string, runId: string): HeadRow {
  if (row.closedLength !== null)
    return { runLength: row.closedLength, status: row.status, lastHash: row.closedHash };
  if (row.seq === null) return { runLength: 0, status: row.status, lastHash: null };
  const place = () => ({ sessionId, runId, seq: row.seq as number });
  return {
    runLength: row.seq + 1,
    status: row.status,
    lastHash: parseBody(decodeBody(row.body, place), place).hash,
  };
}

/** The 32-byte digest a `sha256:<hex>` reference names: the key of `blobs` and `blob_refs`. */
function refDigest(ref: string): Buffer {
  return Buffer.from(ref.slice("sha256:".length), "hex");
}

interface Statements {
  dataVersion: Statement;
  findEvents: Statement;
  readRun: Statement;
  lastCursor: Statement;
  insertSession: Statement;
  insertEvent: Statement;
  insertHead: Statement;
  closeRun: Statement;
  indexRef: Statement;
  lockSession: Statement;
  openRuns: Statement;
  countRefs: Statement;
  collectSessionBlobs: Statement;
  deleteEvents: Statement;
  deleteRuns: Statement;
  deleteRefs: Statement;
  deleteSession: Statement;
  blobPage: Statement;
  collectBlobs: Statement;
  deleteBlobRefs: Statement;
}

/**
 * SQLite through better-sqlite3. The write path uses raw prepared statements (cached, taken
 * from the same connection drizzle wraps): measured, drizzle's builder per statement cost more
 * than the whole raw append, and the bench holds an append to 1.2x a raw insert. Reads use
 * drizzle's builder on the schema.
 */
export class SqliteBackend implements SqlBackend {
  readonly #connection: SqliteConnection;
  readonly #location: string;
  #statements: Statements | undefined;
  #readStatements: ReadStatements | undefined;
  #putBlob: Statement | undefined;
  #getBlobs: Statement | undefined;
  #transaction: ((program: () => WriteProgram<unknown>) => unknown) | undefined;
  #atHead: ((append: HeadAppend) => number | undefined) | undefined;

  constructor(options: SqliteConnectionOptions) {
    this.#connection = new SqliteConnection(options);
    this.#location = options.location;
  }

  get #database(): Database.Database {
    return this.#connection.current.database;
  }

  get #db(): BetterSQLite3Database {
    return this.#connection.current.db;
  }

  get #heads(): ConnectionHeads {
    return this.#connection.current.heads;
  }

  /** The highest migration the file records; 0 for a file without the ledger's tables. */
  #schemaVersion(): number {
    const database = this.#database;
    const table = database
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
      .get();
    if (!table) return 0;
    const row = database.prepare("SELECT max(version) AS v FROM schema_version").get() as {
      v: number | null;
    };
    return Number(row.v ?? 0);
  }

  /**
   * Applies the pending migrations in one transaction. BEGIN IMMEDIATE takes the write lock
   * before reading the version: a process that starts at the same time waits (busy timeout),
   * then sees the migrations already applied.
   */
  #migrate(): void {
    const database = this.#database;
    database
      .transaction(() => {
        for (const migration of pendingMigrations("sqlite", this.#schemaVersion())) {
          for (const statement of migration.statements) database.exec(statement);
          database
            .prepare("INSERT INTO schema_version (version, tag, applied_at) VALUES (?, ?, ?)")
            .run(migration.version, migration.tag, new Date().toISOString());
        }
      })
      .immediate();
  }

  async init(options?: InitOptions): Promise<void> {
    if (options?.create === false) this.#connection.assertLedger(() => this.#schemaVersion());
    // Busy timeout first (set on opening): switching to WAL takes a lock another process may
    // hold. A no-op on a ledger, which is in WAL from its first init.
    this.#database.pragma("journal_mode = WAL");
    const deadline = Date.now() + MIGRATION_WAIT_MS;
    for (;;) {
      // A read takes no lock (WAL): a file already at this version is settled, and a newer
      // one refused, without waiting for whoever holds the write lock.
      if (pendingMigrations("sqlite", this.#schemaVersion()).length === 0) return;
      try {
        this.#migrate();
        return;
      } catch (error) {
        // The write lock stayed taken past the busy timeout while the file is still behind:
        // another process is migrating a large file. Wait for it (it may do ours).
        if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline)
          throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /** The write statements, prepared on first use. */
  #prepared(): Statements {
    if (this.#statements !== undefined) return this.#statements;
    const database = this.#database;
    this.#statements = {
      dataVersion: database.prepare("PRAGMA data_version").pluck(),
      findEvents: database.prepare(
        "SELECT body FROM events WHERE session_id = ? AND event_id IN (SELECT value FROM json_each(?))",
      ),
      readRun: database.prepare(
        "SELECT body FROM events WHERE session_id = ? AND run_id = ? AND seq < ? ORDER BY seq",
      ),
      lastCursor: database
        .prepare("SELECT max(commit_cursor) FROM events WHERE session_id = ?")
        .pluck(),
      insertSession: database.prepare(
        "INSERT INTO sessions (session_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING",
      ),
      insertEvent: database.prepare(
        `INSERT INTO events (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertHead: database.prepare(
        `INSERT INTO runs (session_id, run_id, status, parent_run_id, started_at)
         VALUES (?, ?, ?, ?, ?)`,
      ),
      closeRun: database.prepare(
        "UPDATE runs SET status = ?, closed_length = ?, closed_hash = ? WHERE session_id = ? AND run_id = ?",
      ),
      indexRef: database.prepare(
        "INSERT INTO blob_refs (digest, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
      ),
      lockSession: database.prepare("SELECT 1 FROM sessions WHERE session_id = ?").pluck(),
      openRuns: database.prepare(
        "SELECT run_id AS runId FROM runs WHERE session_id = ? AND status = 'running' ORDER BY run_id",
      ),
      countRefs: database.prepare("SELECT count(*) FROM blob_refs WHERE session_id = ?").pluck(),
      collectSessionBlobs: database.prepare(
        `DELETE FROM blobs WHERE digest IN (SELECT digest FROM blob_refs WHERE session_id = ?)
         AND touched_at <= ${epochMs} - ?
         AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.digest = blobs.digest AND r.session_id <> ?)`,
      ),
      deleteEvents: database.prepare("DELETE FROM events WHERE session_id = ?"),
      deleteRuns: database.prepare("DELETE FROM runs WHERE session_id = ?"),
      deleteRefs: database.prepare("DELETE FROM blob_refs WHERE session_id = ?"),
      deleteSession: database.prepare("DELETE FROM sessions WHERE session_id = ?"),
      blobPage: database.prepare(
        `SELECT count(*) AS examined, max(digest) AS last
         FROM (SELECT digest FROM blobs WHERE digest > ? ORDER BY digest LIMIT ?)`,
      ),
      collectBlobs: database
        .prepare(
          `DELETE FROM blobs WHERE digest > ? AND digest <= ? AND touched_at <= ${epochMs} - ?
           AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.digest = blobs.digest
             AND EXISTS (SELECT 1 FROM sessions s WHERE s.session_id = r.session_id))
           RETURNING digest`,
        )
        .pluck(),
      deleteBlobRefs: database.prepare("DELETE FROM blob_refs WHERE digest = ?"),
    };
    return this.#statements;
  }

  #execute(step: WriteStep, statements: Statements): unknown {
    switch (step.kind) {
      case "lock-head":
        // The IMMEDIATE transaction already holds the database's write lock.
        return this.#lockedHead(step.sessionId, step.runId);
      case "find-events":
        return (
          statements.findEvents.all(step.sessionId, JSON.stringify(step.eventIds)) as {
            body: unknown;
          }[]
        ).map((row) => decodeBody(row.body));
      case "read-run":
        return (
          statements.readRun.all(step.sessionId, step.runId, step.uptoSeq) as { body: unknown }[]
        ).map((row) => decodeBody(row.body));
      case "reserve-cursors": {
        const last = this.#lastCursor(step.sessionId, statements);
        if (last === 0) statements.insertSession.run(step.sessionId, step.now);
        this.#heads.rememberCursor(step.sessionId, last + step.count);
        return last + step.count;
      }
      case "insert-events":
        for (const row of step.rows) {
          statements.insertEvent.run(
            row.sessionId,
            row.commitCursor,
            row.runId,
            row.seq,
            row.eventId,
            row.eventType,
            row.recordedAt,
            encodeBody(row.body),
          );
        }
        return undefined;
      case "put-blobs":
        this.#storeBlobs(step.blobs);
        return undefined;
      case "index-refs":
        for (const ref of step.refs) statements.indexRef.run(refDigest(ref), step.sessionId);
        return undefined;
      case "lock-session":
        // The IMMEDIATE transaction already holds the database's write lock.
        return statements.lockSession.get(step.sessionId) !== undefined;
      case "open-runs":
        return (statements.openRuns.all(step.sessionId) as { runId: string }[]).map(
          (row) => row.runId,
        );
      case "collect-session-blobs": {
        const { sessionId, graceMs } = step;
        const refs = statements.countRefs.get(sessionId) as number;
        if (refs === 0) return { refs, deleted: 0 };
        const deleted = statements.collectSessionBlobs.run(sessionId, graceMs, sessionId).changes;
        return { refs, deleted };
      }
      case "collect-blobs":
        return this.#collectBlobs(step, statements);
      case "delete-session": {
        this.#heads.forgetAll();
        const events = statements.deleteEvents.run(step.sessionId).changes;
        const runs = statements.deleteRuns.run(step.sessionId).changes;
        statements.deleteRefs.run(step.sessionId);
        statements.deleteSession.run(step.sessionId);
        return { events, runs };
      }
      case "write-head": {
        // Only a new run, or one that closes, writes its row; an open run's length and last
        // hash are its last event's (see schema.ts).
        const { sessionId, runId, head } = step;
        if (step.created) {
          // A run is created running: a batch that also closes it is recorded as closing below.
          statements.insertHead.run(sessionId, runId, "running", step.parentRunId, step.startedAt);
        }
        this.#moveHead(sessionId, runId, head, statements);
        return undefined;
      }
    }
  }

  /**
   * A page of collectBlobs, inside the IMMEDIATE transaction: it holds the database's write
   * lock, so no put or append runs between finding the page, deleting its blobs (touched_at
   * and the references as committed) and deleting their index rows, and the page's few
   * hundred index lookups are all a writer waits for. The page's bounds are its first
   * `limit` keys; the delete finds its blobs between them with the primary key.
   */
  #collectBlobs(
    step: Extract<WriteStep, { kind: "collect-blobs" }>,
    statements: Statements,
  ): BlobPage {
    const after = step.after === undefined ? Buffer.alloc(0) : refDigest(step.after);
    const page = statements.blobPage.get(after, step.limit) as {
      examined: number;
      last: Buffer | null;
    };
    if (page.last === null) return { examined: 0, last: undefined, deleted: 0 };
    const deleted = statements.collectBlobs.all(after, page.last, step.graceMs) as Buffer[];
    // No existing session references these: their index rows are of sessions that are gone.
    for (const digest of deleted) statements.deleteBlobRefs.run(digest);
    return {
      examined: page.examined,
      last: `sha256:${page.last.toString("hex")}`,
      deleted: deleted.length,
    };
  }

  async write<T>(program: () => WriteProgram<T>): Promise<T> {
    if (this.#transaction === undefined) {
      const statements = this.#prepared();
      this.#transaction = this.#database.transaction((make: () => WriteProgram<unknown>) => {
        this.#heads.begin(statements.dataVersion.get() as number);
        return runSync(make(), (step) => this.#execute(step, statements));
      }).immediate;
    }
    const transaction = this.#transaction;
    return this.#keepingHeads(() => transaction(program) as T);
  }

  /**
   * Runs a write transaction and tells the connection's heads how it ended: committed, what it
   * remembered holds; rolled back (it threw), what it remembered may never have been written.
   */
  #keepingHeads<T>(transaction: () => T): T {
    let result: T;
    try {
      result = transaction();
    } catch (error) {
      this.#heads.forgetAll();
      throw error;
    }
    this.#heads.committed();
    return result;
  }

  /** A run's head from its row (status) and its last event (length, hash); undefined if absent. */
  #readHead(sessionId: string, runId: string): HeadRow | undefined {
    const row = this.#reads().head.get(sessionId, runId) as RunWithLast | undefined;
    return row === undefined ? undefined : headRow(row, sessionId, runId);
  }

  /**
   * The append of a writer that continues the run where this store's last append left it (see
   * SqlBackend.appendAtHead): one IMMEDIATE transaction that checks the head this connection
   * knows (valid while no other connection committed, see sqlite-heads.ts) or reads it, then
   * inserts the rows (the events, the blobs they carry, and the reference index rows of the
   * blobs they name and carry). No write program, no statement but the inserts: this is every
   * recorded model and tool call.
   * Undefined (nothing written) when the run is not at `expected`.
   */
  async appendAtHead(append: HeadAppend): Promise<number | undefined> {
    if (this.#atHead === undefined) {
      const statements = this.#prepared();
      this.#atHead = this.#database.transaction((next: HeadAppend) =>
        this.#writeAtHead(next, statements),
      ).immediate;
    }
    const atHead = this.#atHead;
    return this.#keepingHeads(() => atHead(append));
  }

  #writeAtHead(append: HeadAppend, statements: Statements): number | undefined {
    const { sessionId, runId, expected } = append;
    const heads = this.#heads;
    heads.begin(statements.dataVersion.get() as number);
    const head = this.#lockedHead(sessionId, runId);
    if (
      head === undefined ||
      head.status !== "running" ||
      head.runLength !== expected.length ||
      head.lastHash !== expected.lastHash
    )
      return undefined;
    // The run exists, so its session does.
    let cursor = this.#lastCursor(sessionId, statements);
    for (const event of append.events) {
      cursor++;
      statements.insertEvent.run(
        sessionId,
        cursor,
        runId,
        event.seq,
        event.eventId,
        event.eventType,
        event.recordedAt,
        encodeBody(`${event.bodyPrefix}${cursor}}`),
      );
    }
    this.#storeBlobs(append.blobs);
    for (const ref of append.refs) statements.indexRef.run(refDigest(ref), sessionId);
    heads.rememberCursor(sessionId, cursor);
    this.#moveHead(sessionId, runId, append, statements);
    return cursor;
  }

  /** Inside a write transaction: the run's head, as remembered or read (then remembered). */
  #lockedHead(sessionId: string, runId: string): HeadRow | undefined {
    const remembered = this.#heads.head(sessionId, runId);
    if (remembered !== undefined) return remembered;
    const head = this.#readHead(sessionId, runId);
    if (head !== undefined) this.#heads.rememberHead(sessionId, runId, head);
    return head;
  }

  /** Inside a write transaction: the session's largest cursor (0 for a new session). */
  #lastCursor(sessionId: string, statements: Statements): number {
    return (
      this.#heads.cursor(sessionId) ?? (statements.lastCursor.get(sessionId) as number | null) ?? 0
    );
  }

  /**
   * Inside a write transaction, after the batch's rows: the run's new head. Only a closing run
   * writes it into its row (an open run's head is its last event's, see schema.ts).
   */
  #moveHead(
    sessionId: string,
    runId: string,
    head: { length: number; status: string; lastHash: string | null },
    statements: Statements,
  ): void {
    if (head.status !== "running")
      statements.closeRun.run(head.status, head.length, head.lastHash, sessionId, runId);
    this.#heads.rememberHead(sessionId, runId, {
      runLength: head.length,
      status: head.status,
      lastHash: head.lastHash,
    });
  }

  classify(error: unknown): DriverErrorKind {
    const code = driverError(error).code;
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY")
      return "unique";
    return "unavailable";
  }

  async runHead(sessionId: string, runId: string): Promise<HeadRow | undefined> {
    return this.#readHead(sessionId, runId);
  }

  async readRun(sessionId: string, runId: string, fromSeq: number, limit?: number) {
    const query = this.#db
      .select({ body: events.body, seq: events.seq })
      .from(events)
      .where(
        and(eq(events.sessionId, sessionId), eq(events.runId, runId), gte(events.seq, fromSeq)),
      )
      .orderBy(asc(events.seq));
    const rows = limit === undefined ? query.all() : query.limit(limit).all();
    return rows.map((row) => decodeBody(row.body, () => ({ sessionId, runId, seq: row.seq })));
  }

  async readSession(sessionId: string, after: number, limit?: number) {
    const query = this.#db
      .select({ body: events.body, commitCursor: events.commitCursor })
      .from(events)
      .where(and(eq(events.sessionId, sessionId), gt(events.commitCursor, after)))
      .orderBy(asc(events.commitCursor));
    const rows = limit === undefined ? query.all() : query.limit(limit).all();
    return rows.map((row) =>
      decodeBody(row.body, () => ({ sessionId, commitCursor: row.commitCursor })),
    );
  }

  async listRuns(sessionId: string): Promise<RunRow[]> {
    const rows = this.#reads().runs.all(sessionId) as (RunRow & RunWithLast)[];
    return rows.map((row) => ({
      runId: row.runId,
      parentRunId: row.parentRunId,
      startedAt: row.startedAt,
      ...headRow(row, sessionId, row.runId),
    }));
  }

  async listSessions(after: string | undefined, limit: number | undefined): Promise<SessionRow[]> {
    return this.#reads().sessions.all(after ?? "", limit ?? -1) as SessionRow[];
  }

  /**
   * Reads of heads, runs and sessions, which SQLite keeps in no counter row: each is the last
   * event of its run or session, found with max() on an index (one seek, whatever the length).
   */
  #reads(): ReadStatements {
    if (this.#readStatements === undefined) {
      const database = this.#database;
      this.#readStatements = {
        head: database.prepare(
          `SELECT r.status AS status, r.closed_length AS closedLength, r.closed_hash AS closedHash,
             e.seq AS seq, e.body AS body FROM runs r
           LEFT JOIN events e ON e.session_id = r.session_id AND e.run_id = r.run_id
             AND e.seq = (SELECT max(seq) FROM events WHERE session_id = r.session_id AND run_id = r.run_id)
           WHERE r.session_id = ? AND r.run_id = ?`,
        ),
        runs: database.prepare(
          `SELECT r.run_id AS runId, r.status AS status, r.closed_length AS closedLength,
             r.closed_hash AS closedHash, r.parent_run_id AS parentRunId,
             r.started_at AS startedAt, e.seq AS seq, e.body AS body
           FROM runs r
           JOIN events f ON f.session_id = r.session_id AND f.run_id = r.run_id AND f.seq = 0
           LEFT JOIN events e ON e.session_id = r.session_id AND e.run_id = r.run_id
             AND e.seq = (SELECT max(seq) FROM events WHERE session_id = r.session_id AND run_id = r.run_id)
           WHERE r.session_id = ?
           ORDER BY f.commit_cursor`,
        ),
        sessions: database.prepare(
          `SELECT s.session_id AS sessionId, s.created_at AS createdAt,
             e.commit_cursor AS lastCursor, e.recorded_at AS updatedAt
           FROM sessions s
           JOIN events e ON e.session_id = s.session_id
             AND e.commit_cursor = (SELECT max(commit_cursor) FROM events WHERE session_id = s.session_id)
           WHERE s.session_id > ?
           ORDER BY s.session_id
           LIMIT ?`,
        ),
      };
    }
    return this.#readStatements;
  }

  async putBlobs(
    rows: { ref: string; stored: Uint8Array }[],
    durable: boolean,
    sessionId: string | undefined,
  ): Promise<void> {
    const indexRef = sessionId === undefined ? undefined : this.#prepared().indexRef;
    const put = () => {
      if (indexRef !== undefined)
        for (const row of rows) indexRef.run(refDigest(row.ref), sessionId);
      this.#storeBlobs(rows);
    };
    if (durable) {
      if (rows.length === 1 && indexRef === undefined) put();
      else this.#database.transaction(put).immediate();
      return;
    }
    // Blobs put right before the append that names them: committed without an
    // fsync of their own. The WAL is one sequential file, so the fsync of that append's
    // commit (synchronous = FULL) makes these frames durable too, before the event is.
    this.#database.pragma("synchronous = NORMAL");
    try {
      this.#database.transaction(put).immediate();
    } finally {
      this.#database.pragma("synchronous = FULL");
    }
  }

  /** Inserts blobs, or sets their touched_at again (inside a transaction, or one alone). */
  #storeBlobs(rows: readonly { ref: string; stored: Uint8Array }[]): void {
    if (rows.length === 0) return;
    if (this.#putBlob === undefined) {
      this.#putBlob = this.#database.prepare(
        `INSERT INTO blobs (digest, content, touched_at) VALUES (?, ?, ${epochMs})
         ON CONFLICT (digest) DO UPDATE SET touched_at = excluded.touched_at`,
      );
    }
    const statement = this.#putBlob;
    for (const row of rows) statement.run(refDigest(row.ref), bufferOf(row.stored));
  }

  async getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    if (this.#getBlobs === undefined) {
      this.#getBlobs = this.#database.prepare(
        `SELECT lower(hex(digest)) AS hex, content FROM blobs
         WHERE digest IN (SELECT unhex(substr(value, 8)) FROM json_each(?))`,
      );
    }
    const statement = this.#getBlobs;
    const out = new Map<string, Uint8Array>();
    for (let start = 0; start < refs.length; start += 500) {
      const chunk = refs.slice(start, start + 500);
      for (const row of statement.all(JSON.stringify(chunk)) as { hex: string; content: Buffer }[])
        out.set(`sha256:${row.hex}`, row.content);
    }
    return out;
  }

  describe(): StoreDescription {
    return {
      kind: "sqlite",
      location: this.#location,
      durability: {
        journal_mode: String(this.#database.pragma("journal_mode", { simple: true })),
        synchronous: Number(this.#database.pragma("synchronous", { simple: true })),
      },
    };
  }

  async close(): Promise<void> {
    this.#statements = undefined;
    this.#readStatements = undefined;
    this.#transaction = undefined;
    this.#atHead = undefined;
    this.#putBlob = undefined;
    this.#getBlobs = undefined;
    this.#connection.close();
  }
}
