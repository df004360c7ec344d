import type Database from "better-sqlite3";
import { and, asc, eq, gt, gte } from "drizzle-orm";
import { type BetterSQLite3Database, drizzle } from "drizzle-orm/better-sqlite3";
import type { StoreDescription } from "../../store/event-store.js";
import { pendingMigrations } from "../sql/migrations.js";
import type { HeadRow, RunRow, SessionRow } from "../sql/rows.js";
import type { DriverErrorKind, SqlBackend } from "../sql/sql-backend.js";
import { driverError } from "../sql/sql-backend.js";
import { runSync, type WriteProgram, type WriteStep } from "../sql/write-program.js";
import { decodeBody, encodeBody } from "./body-codec.js";
import { events, runs, sessions } from "./schema.js";

type Statement = Database.Statement<unknown[], unknown>;

/** The 32-byte digest a `sha256:<hex>` reference names: the key of `blobs` and `blob_refs`. */
function refDigest(ref: string): Buffer {
  return Buffer.from(ref.slice("sha256:".length), "hex");
}

interface Statements {
  lockHead: Statement;
  findEvents: Statement;
  readRun: Statement;
  reserve: Statement;
  insertEvent: Statement;
  insertHead: Statement;
  updateHead: Statement;
  indexRef: Statement;
  lockSession: Statement;
  openRuns: Statement;
  sessionBodies: Statement;
  deleteEvents: Statement;
  deleteRuns: Statement;
  deleteRefs: Statement;
  deleteSession: Statement;
  collectBlobs: Statement;
}

/**
 * SQLite through better-sqlite3. The write path uses raw prepared statements (cached, taken
 * from the same connection drizzle wraps): measured, drizzle's builder per statement cost more
 * than the whole raw append, and the bench holds an append to 1.2x a raw insert. Reads use
 * drizzle's builder on the schema.
 */
export class SqliteBackend implements SqlBackend {
  readonly #database: Database.Database;
  readonly #db: BetterSQLite3Database;
  readonly #location: string;
  readonly #owned: boolean;
  #statements: Statements | undefined;
  #putBlob: Statement | undefined;
  #getBlobs: Statement | undefined;
  #transaction: ((program: () => WriteProgram<unknown>) => unknown) | undefined;

  constructor(options: { database: Database.Database; location: string; owned: boolean }) {
    this.#database = options.database;
    this.#location = options.location;
    this.#owned = options.owned;
    // Busy timeout first: switching to WAL takes a lock another process may hold.
    this.#database.pragma("busy_timeout = 10000");
    this.#database.pragma("journal_mode = WAL");
    this.#database.pragma("synchronous = FULL");
    this.#db = drizzle({ client: this.#database });
  }

  async init(): Promise<void> {
    const database = this.#database;
    // BEGIN IMMEDIATE takes the write lock before reading the version: a process that starts
    // at the same time waits (busy timeout), then sees the migrations already applied.
    database
      .transaction(() => {
        const table = database
          .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")
          .get();
        const current = table
          ? Number(
              (
                database.prepare("SELECT max(version) AS v FROM schema_version").get() as {
                  v: number | null;
                }
              ).v ?? 0,
            )
          : 0;
        for (const migration of pendingMigrations("sqlite", current)) {
          for (const statement of migration.statements) database.exec(statement);
          database
            .prepare("INSERT INTO schema_version (version, tag, applied_at) VALUES (?, ?, ?)")
            .run(migration.version, migration.tag, new Date().toISOString());
        }
      })
      .immediate();
  }

  #prepare(): Statements {
    const database = this.#database;
    return {
      lockHead: database.prepare(
        "SELECT run_length AS runLength, status, last_hash AS lastHash FROM runs WHERE session_id = ? AND run_id = ?",
      ),
      findEvents: database.prepare(
        "SELECT body FROM events WHERE session_id = ? AND event_id IN (SELECT value FROM json_each(?))",
      ),
      readRun: database.prepare(
        "SELECT body FROM events WHERE session_id = ? AND run_id = ? AND seq < ? ORDER BY seq",
      ),
      reserve: database.prepare(
        `INSERT INTO sessions (session_id, last_cursor, created_at, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (session_id) DO UPDATE SET last_cursor = last_cursor + excluded.last_cursor,
         updated_at = excluded.updated_at RETURNING last_cursor AS lastCursor`,
      ),
      insertEvent: database.prepare(
        `INSERT INTO events (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      insertHead: database.prepare(
        `INSERT INTO runs (session_id, run_id, run_length, status, last_hash, parent_run_id, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      updateHead: database.prepare(
        "UPDATE runs SET run_length = ?, status = ?, last_hash = ? WHERE session_id = ? AND run_id = ?",
      ),
      indexRef: database.prepare(
        "INSERT INTO blob_refs (digest, session_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
      ),
      lockSession: database.prepare(
        "SELECT last_cursor AS lastCursor FROM sessions WHERE session_id = ?",
      ),
      openRuns: database.prepare(
        "SELECT run_id AS runId FROM runs WHERE session_id = ? AND status = 'running' ORDER BY run_id",
      ),
      sessionBodies: database.prepare("SELECT body FROM events WHERE session_id = ?"),
      deleteEvents: database.prepare("DELETE FROM events WHERE session_id = ?"),
      deleteRuns: database.prepare("DELETE FROM runs WHERE session_id = ?"),
      deleteRefs: database.prepare("DELETE FROM blob_refs WHERE session_id = ?"),
      deleteSession: database.prepare("DELETE FROM sessions WHERE session_id = ?"),
      collectBlobs: database.prepare(
        `DELETE FROM blobs WHERE digest IN (SELECT unhex(substr(value, 8)) FROM json_each(?))
         AND touched_at <= ? AND NOT EXISTS (SELECT 1 FROM blob_refs r WHERE r.digest = blobs.digest)`,
      ),
    };
  }

  #execute(step: WriteStep, statements: Statements): unknown {
    switch (step.kind) {
      case "lock-head":
        // The IMMEDIATE transaction already holds the database's write lock.
        return statements.lockHead.get(step.sessionId, step.runId) as HeadRow | undefined;
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
      case "reserve-cursors":
        return (
          statements.reserve.get(step.sessionId, step.count, step.now, step.now) as {
            lastCursor: number;
          }
        ).lastCursor;
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
      case "index-refs":
        for (const ref of step.refs) statements.indexRef.run(refDigest(ref), step.sessionId);
        return undefined;
      case "lock-session":
        // The IMMEDIATE transaction already holds the database's write lock.
        return (statements.lockSession.get(step.sessionId) as { lastCursor: number } | undefined)
          ?.lastCursor;
      case "open-runs":
        return (statements.openRuns.all(step.sessionId) as { runId: string }[]).map(
          (row) => row.runId,
        );
      case "session-bodies":
        return (statements.sessionBodies.all(step.sessionId) as { body: unknown }[]).map((row) =>
          decodeBody(row.body),
        );
      case "delete-session": {
        const events = statements.deleteEvents.run(step.sessionId).changes;
        const runs = statements.deleteRuns.run(step.sessionId).changes;
        statements.deleteRefs.run(step.sessionId);
        statements.deleteSession.run(step.sessionId);
        return { events, runs };
      }
      case "collect-blobs":
        return statements.collectBlobs.run(JSON.stringify(step.refs), step.cutoff).changes;
      case "write-head":
        if (step.created) {
          statements.insertHead.run(
            step.sessionId,
            step.runId,
            step.head.length,
            step.head.status,
            step.head.lastHash,
            step.parentRunId,
            step.startedAt,
          );
        } else {
          statements.updateHead.run(
            step.head.length,
            step.head.status,
            step.head.lastHash,
            step.sessionId,
            step.runId,
          );
        }
        return undefined;
    }
  }

  async write<T>(program: () => WriteProgram<T>): Promise<T> {
    if (this.#transaction === undefined) {
      const statements = this.#prepare();
      this.#statements = statements;
      this.#transaction = this.#database.transaction((make: () => WriteProgram<unknown>) =>
        runSync(make(), (step) => this.#execute(step, statements)),
      ).immediate;
    }
    return this.#transaction(program) as T;
  }

  classify(error: unknown): DriverErrorKind {
    const code = driverError(error).code;
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY")
      return "unique";
    return "unavailable";
  }

  async runHead(sessionId: string, runId: string): Promise<HeadRow | undefined> {
    return this.#db
      .select({ runLength: runs.runLength, status: runs.status, lastHash: runs.lastHash })
      .from(runs)
      .where(and(eq(runs.sessionId, sessionId), eq(runs.runId, runId)))
      .get();
  }

  async readRun(sessionId: string, runId: string, fromSeq: number, limit?: number) {
    const query = this.#db
      .select({ body: events.body })
      .from(events)
      .where(
        and(eq(events.sessionId, sessionId), eq(events.runId, runId), gte(events.seq, fromSeq)),
      )
      .orderBy(asc(events.seq));
    const rows = limit === undefined ? query.all() : query.limit(limit).all();
    return rows.map((row) => decodeBody(row.body));
  }

  async readSession(sessionId: string, after: number, limit?: number) {
    const query = this.#db
      .select({ body: events.body })
      .from(events)
      .where(and(eq(events.sessionId, sessionId), gt(events.commitCursor, after)))
      .orderBy(asc(events.commitCursor));
    const rows = limit === undefined ? query.all() : query.limit(limit).all();
    return rows.map((row) => decodeBody(row.body));
  }

  async listRuns(sessionId: string): Promise<RunRow[]> {
    return this.#db
      .select({
        runId: runs.runId,
        runLength: runs.runLength,
        status: runs.status,
        lastHash: runs.lastHash,
        parentRunId: runs.parentRunId,
        startedAt: runs.startedAt,
      })
      .from(runs)
      .innerJoin(
        events,
        and(eq(events.sessionId, runs.sessionId), eq(events.runId, runs.runId), eq(events.seq, 0)),
      )
      .where(eq(runs.sessionId, sessionId))
      .orderBy(asc(events.commitCursor))
      .all();
  }

  async listSessions(after: string | undefined, limit: number | undefined): Promise<SessionRow[]> {
    const query = this.#db
      .select()
      .from(sessions)
      .where(after === undefined ? undefined : gt(sessions.sessionId, after))
      .orderBy(asc(sessions.sessionId));
    return limit === undefined ? query.all() : query.limit(limit).all();
  }

  async putBlobs(
    rows: { ref: string; stored: Uint8Array }[],
    touchedAt: number,
    durable: boolean,
  ): Promise<void> {
    if (this.#putBlob === undefined) {
      this.#putBlob = this.#database.prepare(
        `INSERT INTO blobs (digest, content, touched_at) VALUES (?, ?, ?)
         ON CONFLICT (digest) DO UPDATE SET touched_at = excluded.touched_at`,
      );
    }
    const statement = this.#putBlob;
    const put = () => {
      for (const row of rows) {
        const bytes = row.stored;
        statement.run(
          refDigest(row.ref),
          Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          touchedAt,
        );
      }
    };
    if (durable) {
      if (rows.length === 1) put();
      else this.#database.transaction(put).immediate();
      return;
    }
    // Blobs the recorder puts right before the append that names them: committed without an
    // fsync of their own. The WAL is one sequential file, so the fsync of that append's
    // commit (synchronous = FULL) makes these frames durable too, before the event is.
    this.#database.pragma("synchronous = NORMAL");
    try {
      this.#database.transaction(put).immediate();
    } finally {
      this.#database.pragma("synchronous = FULL");
    }
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
    this.#transaction = undefined;
    this.#putBlob = undefined;
    this.#getBlobs = undefined;
    if (this.#owned && this.#database.open) this.#database.close();
  }
}
