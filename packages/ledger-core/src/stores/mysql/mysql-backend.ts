import { asc, gt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/mysql2";
import type mysql from "mysql2/promise";
import type { InitOptions, StoreDescription } from "../../store/event-store.js";
import { neverSent } from "../never-sent.js";
import type { HeadAppend } from "../sql/head-cache.js";
import type { SessionRow } from "../sql/rows.js";
import { idText, SharedReads } from "../sql/shared-queries.js";
import {
  type BlobRow,
  type DriverErrorKind,
  driverError,
  type SqlBackend,
} from "../sql/sql-backend.js";
import { runAsync, type WriteProgram } from "../sql/write-program.js";
import { appendBatch } from "./append-block.js";
import { type Db, MysqlBackendState, type Tables } from "./backend-state.js";
import { boundedReads } from "./bounded.js";
import { initDatabase } from "./init-database.js";
import { lostConnection } from "./lost-connection.js";
import { unnested } from "./own-query.js";
import { configuredDatabase } from "./pool-config.js";
import { putBlobRows } from "./put-blobs.js";
import { mysqlTables } from "./schema.js";
import { packetLimit } from "./server-limits.js";
import { driverConnectTimeout, driverTimeout } from "./timed-out.js";
import { inTransaction } from "./transaction.js";
import { executeStep } from "./write-steps.js";

/**
 * MySQL and MariaDB through mysql2. A write runs on one pooled connection at READ COMMITTED
 * (no gap locks: two writers creating one run meet on the unique key, not in a deadlock); the
 * run head is locked with SELECT ... FOR UPDATE, the session counter row by its upsert. A
 * connection that failed is destroyed, never returned to the pool.
 */
export class MysqlBackend extends SharedReads<Db, Tables> implements SqlBackend {
  /**
   * The pool, the database and what the backend learnt of the server, handed to the functions
   * of each concept (append-block.ts, write-steps.ts, put-blobs.ts, init-database.ts...).
   */
  readonly #state: MysqlBackendState;

  constructor(options: {
    pool: mysql.Pool;
    owned: boolean;
    database?: string;
    location: string;
    /** The store's bound on each wait (bounded.ts); none (0) when absent. */
    timeoutMs?: number;
    connectTimeoutMs?: number;
  }) {
    const database = options.database ?? configuredDatabase(options.pool);
    super(
      drizzle({
        client: unnested(boundedReads(options.pool, options.timeoutMs ?? 0), options.pool),
      }),
      mysqlTables(database),
    );
    this.#state = new MysqlBackendState({
      pool: options.pool,
      owned: options.owned,
      database,
      location: options.location,
      tables: this.tables,
      timeoutMs: options.timeoutMs ?? 0,
      connectTimeoutMs: options.connectTimeoutMs,
    });
  }

  init(options?: InitOptions): Promise<void> {
    return initDatabase(this.#state, options);
  }

  /** False once the server is known to be MySQL, which has no anonymous compound blocks. */
  appendsAtHead(): boolean {
    return this.#state.blocks !== false;
  }

  async write<T>(program: () => WriteProgram<T>): Promise<T> {
    // Known since init; asked before taking a connection (a one-connection pool would wait on
    // itself), and once per write, not per step.
    const state = this.#state;
    const maxPacket = state.maxPacket ?? (await packetLimit(state));
    return inTransaction(state, (tx) =>
      runAsync(program(), (step) => executeStep(state, tx, step, maxPacket)),
    );
  }

  /** `appendAtHeads` takes the appends of several sessions in one statement (see below). */
  readonly batchesAcrossSessions = true;

  /**
   * The one-round-trip append of one run or of several runs, of one or several sessions (see
   * SqlBackend.appendAtHeads), on MariaDB only: an anonymous compound statement (`BEGIN NOT
   * ATOMIC`, one statement, so no `multipleStatements` is needed and an application's pool works
   * as it is) runs the whole READ COMMITTED transaction on the server. It moves each run's head
   * only if it still is the cached one, locking the runs rows first, in (session, run) order,
   * like the transactional path; then, session by session in the same order, bumps the
   * session's counter once by the events of its appends that moved (held until COMMIT: cursors
   * stay gap-free and in commit order) and inserts those events with consecutive cursors. Every
   * batch takes its locks in that one order (runs rows, then counter rows), so two batches never
   * deadlock on each other. The counter's new value comes back through the user variable
   * `@agent_ledger_cursor`, set by the UPDATE itself (MariaDB has no UPDATE ... RETURNING), which
   * saves reading the row again: about 15 µs of server CPU per event (113 against 128 µs, median
   * of 9 rounds of 3,200 appends by 8 writers). The variable stays on the connection, holding
   * the last cursor it wrote. An append whose head was not the expected one writes nothing and
   * answers undefined. Any error rolls back and is re-raised with its own errno. Plain SQL
   * rather than drizzle's builder, prepared once per shape (sessions, runs and events per
   * append) and connection by the driver: this runs on every recorded call. MySQL has no
   * anonymous blocks: there (undefined) the store uses the transactional program. A batch of
   * more than ROWS_PER_STATEMENT events in all is cut short (see statementPart).
   */
  appendAtHeads(appends: HeadAppend[]): Promise<(number | undefined)[]> {
    return appendBatch(this.#state, appends);
  }

  classify(error: unknown): DriverErrorKind {
    const errno = driverError(error).errno;
    if (errno === 1062) return "unique";
    if (errno === 1213 || errno === 1205) return "transient";
    return "unavailable";
  }

  lostConnection(error: unknown): boolean {
    return lostConnection(error);
  }

  /**
   * The append never had a connection to send its statements on: refused at connect, or none
   * made or free within the bound (see `neverSent`).
   */
  wroteNothing(error: unknown): boolean {
    return neverSent(error, driverConnectTimeout);
  }

  timeoutMessage(error: Error): string | undefined {
    return driverTimeout(error, this.#state.connectTimeoutMs);
  }

  async listSessions(after: string | undefined, limit: number | undefined): Promise<SessionRow[]> {
    const { sessions } = this.tables;
    const query = this.db
      .select()
      .from(sessions)
      .where(after === undefined ? undefined : gt(sessions.sessionId, after))
      .orderBy(asc(sessions.sessionId));
    const rows = await (limit === undefined ? query : query.limit(limit));
    return rows.map((row) => ({ ...row, sessionId: idText(row.sessionId) }));
  }

  putBlobs(rows: BlobRow[], _durable: boolean, sessionId: string | undefined): Promise<void> {
    return putBlobRows(this.#state, rows, sessionId);
  }

  describe(): StoreDescription {
    const description: StoreDescription = { kind: "mysql", location: this.#state.location };
    const durability: Record<string, string | number> = {};
    if (this.#state.database !== undefined) durability.database = this.#state.database;
    // Known once init has checked the tables (InnoDB, or init refused them).
    if (this.#state.storage !== undefined) {
      durability.engine = "InnoDB";
      durability.innodb_flush_log_at_trx_commit = this.#state.storage.flushLogAtCommit;
      durability.note =
        "an acknowledged append survives a server crash only with innodb_flush_log_at_trx_commit=1";
    }
    if (Object.keys(durability).length > 0) description.durability = durability;
    return description;
  }

  async close(): Promise<void> {
    if (this.#state.owned) await this.#state.pool.end();
  }
}
