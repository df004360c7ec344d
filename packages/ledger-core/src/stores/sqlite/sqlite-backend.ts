import { and, asc, eq, gt, gte } from "drizzle-orm";
import type { InitOptions, StoreDescription } from "../../store/event-store.js";
import type { HeadAppend } from "../sql/head-cache.js";
import type { HeadRow, RunRow, SessionRow } from "../sql/rows.js";
import type { DriverErrorKind, SqlBackend } from "../sql/sql-backend.js";
import { driverError } from "../sql/sql-backend.js";
import type { WriteProgram } from "../sql/write-program.js";
import { appendAtHead } from "./append-at-head.js";
import { SqliteBackendState } from "./backend-state.js";
import { decodeBody } from "./body-codec.js";
import { checkFile, type FileCheckStopped } from "./file-check.js";
import { headRow, type RunWithLast, readHead } from "./head-row.js";
import { initDatabase } from "./init-database.js";
import { putBlobRows } from "./put-blobs.js";
import { readBlobs } from "./read-blobs.js";
import { readStatements } from "./read-statements.js";
import { events } from "./schema.js";
import { SqliteConnection, type SqliteConnectionOptions } from "./sqlite-connection.js";
import { writeProgram } from "./transaction.js";

/** Result codes (and their extended codes) of a transaction SQLite refused and rolled back. */
const NOTHING_WRITTEN = [
  "SQLITE_FULL",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_READONLY",
  "SQLITE_CANTOPEN",
  "SQLITE_PERM",
];

/** True when the driver error's code is one of `codes` or one of their extended codes. */
function hasResultCode(error: unknown, codes: string[]): boolean {
  const code = String(driverError(error).code ?? "");
  return codes.some((primary) => code === primary || code.startsWith(`${primary}_`));
}

/**
 * SQLite through better-sqlite3. The write path uses raw prepared statements (cached, taken
 * from the same connection drizzle wraps): measured, drizzle's builder per statement cost more
 * than the whole raw append, and the bench holds an append to 1.2x a raw insert. Reads use
 * drizzle's builder on the schema.
 */
export class SqliteBackend implements SqlBackend {
  /**
   * The connection and what the backend prepared on it, handed to the functions of each
   * concept (append-at-head.ts, write-steps.ts, put-blobs.ts, init-database.ts...).
   */
  readonly #state: SqliteBackendState;

  constructor(options: SqliteConnectionOptions) {
    this.#state = new SqliteBackendState({
      connection: new SqliteConnection(options),
      location: options.location,
    });
  }

  init(options?: InitOptions): Promise<void> {
    return initDatabase(this.#state, options);
  }

  write<T>(program: () => WriteProgram<T>): Promise<T> {
    return writeProgram(this.#state, program);
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
  appendAtHead(append: HeadAppend): Promise<number | undefined> {
    return appendAtHead(this.#state, append);
  }

  /**
   * SQLite refused the transaction before it committed, and rolled it back whole: a full disk
   * (or `max_page_count`), a lock held past the busy timeout, a read-only file or folder, a file
   * it cannot open. Not an I/O error, which may strike while a commit is made durable.
   */
  wroteNothing(error: unknown): boolean {
    return hasResultCode(error, NOTHING_WRITTEN);
  }

  /** A malformed database file (SQLITE_CORRUPT, SQLITE_NOTADB and their extended codes). */
  damaged(error: unknown): boolean {
    return hasResultCode(error, ["SQLITE_CORRUPT", "SQLITE_NOTADB"]);
  }

  classify(error: unknown): DriverErrorKind {
    const code = driverError(error).code;
    if (code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY")
      return "unique";
    return "unavailable";
  }

  async runHead(sessionId: string, runId: string): Promise<HeadRow | undefined> {
    return readHead(this.#state, sessionId, runId);
  }

  async readRun(sessionId: string, runId: string, fromSeq: number, limit?: number) {
    const query = this.#state.db
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
    const query = this.#state.db
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
    const rows = readStatements(this.#state).runs.all(sessionId) as (RunRow & RunWithLast)[];
    return rows.map((row) => ({
      runId: row.runId,
      parentRunId: row.parentRunId,
      startedAt: row.startedAt,
      ...headRow(row, sessionId, row.runId),
    }));
  }

  async listSessions(after: string | undefined, limit: number | undefined): Promise<SessionRow[]> {
    return readStatements(this.#state).sessions.all(after ?? "", limit ?? -1) as SessionRow[];
  }

  async putBlobs(
    rows: { ref: string; stored: Uint8Array }[],
    durable: boolean,
    sessionId: string | undefined,
  ): Promise<void> {
    putBlobRows(this.#state, rows, durable, sessionId);
  }

  async getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    return readBlobs(this.#state, refs);
  }

  /** `SqliteEventStore.fileProblems`: see checkFile. */
  fileProblems(signal: AbortSignal | undefined): Promise<string[] | FileCheckStopped> {
    // The store's own connection first: opened on first use, it fails as it always did.
    return checkFile(this.#state.database, this.#state.location, signal);
  }

  describe(): StoreDescription {
    return {
      kind: "sqlite",
      location: this.#state.location,
      durability: {
        journal_mode: String(this.#state.database.pragma("journal_mode", { simple: true })),
        synchronous: Number(this.#state.database.pragma("synchronous", { simple: true })),
      },
    };
  }

  async close(): Promise<void> {
    this.#state.forgetPrepared();
    this.#state.connection.close();
  }
}
