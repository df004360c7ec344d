import { sql } from "drizzle-orm";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import type { InitOptions, StoreDescription } from "../../store/event-store.js";
import { neverSent } from "../never-sent.js";
import type { HeadAppend } from "../sql/head-cache.js";
import type { SessionRow } from "../sql/rows.js";
import { BLOB_BYTES_PER_STATEMENT, SharedReads } from "../sql/shared-queries.js";
import {
  type BlobRow,
  type DriverErrorKind,
  driverError,
  type SqlBackend,
} from "../sql/sql-backend.js";
import { runAsync, type WriteProgram } from "../sql/write-program.js";
import { appendAtHead } from "./append-at-head.js";
import { appendRuns } from "./append-runs.js";
import { PostgresBackendState, type Tables } from "./backend-state.js";
import type { PoolBounds } from "./bounded-pool.js";
import { guardClientErrors } from "./client-errors.js";
import { initDatabase } from "./init-database.js";
import { lostConnection } from "./lost-connection.js";
import { putBlobRows } from "./put-blobs.js";
import { postgresTables } from "./schema.js";
import { driverConnectTimeout, driverTimeout } from "./timed-out.js";
import { boundDb, inTransaction } from "./transaction.js";
import { executeStep } from "./write-steps.js";

/**
 * PostgreSQL through node-postgres. A write checks a client out of the pool and runs the shared
 * program between BEGIN (READ COMMITTED) and COMMIT on a drizzle instance bound to that one client (never the
 * pool: a pooled query would escape the transaction). A client whose connection failed is
 * destroyed (`release(error)`), never returned to the pool.
 */
export class PostgresBackend extends SharedReads<NodePgDatabase, Tables> implements SqlBackend {
  /**
   * The pool, the schema and what the backend learnt of the server, handed to the functions
   * of each concept (append-at-head.ts, write-steps.ts, put-blobs.ts, init-database.ts...).
   */
  readonly #state: PostgresBackendState;

  constructor(options: {
    pool: pg.Pool;
    owned: boolean;
    schema?: string;
    /** The option that chose the schema, for errors about it; `$.schema` by default. */
    schemaPath?: string;
    location: string;
    timeoutMs: number;
    bounds: PoolBounds;
  }) {
    super(drizzle({ client: options.pool }), postgresTables(options.schema ?? "public"));
    guardClientErrors(options.pool);
    this.#state = new PostgresBackendState({
      pool: options.pool,
      owned: options.owned,
      schema: options.schema ?? "public",
      schemaPath: options.schemaPath ?? "$.schema",
      location: options.location,
      tables: this.tables,
      timeoutMs: options.timeoutMs,
      bounds: options.bounds,
    });
  }

  init(options?: InitOptions): Promise<void> {
    return initDatabase(this.#state, options);
  }

  async write<T>(program: () => WriteProgram<T>): Promise<T> {
    const state = this.#state;
    return inTransaction(state, (client) => {
      const tx = boundDb(state, client);
      return runAsync(program(), (step) => executeStep(state, tx, step));
    });
  }

  /**
   * The one-statement append (see SqlBackend.appendAtHead), in autocommit. Data-modifying CTEs
   * run in order of their references: `h` moves the run head only if it is still the cached
   * one (locking the runs row first, like the transactional path, so the two never deadlock),
   * `c` bumps the session counter only if `h` matched (the row stays locked until the
   * statement commits: cursors stay gap-free and in commit order), `e` inserts the events with
   * their cursors and the body completed by its `commitCursor`. Raw SQL as a named (prepared)
   * query rather than drizzle's builder: this is the hot path of every recorded call, and
   * building the query each time costs more CPU than the server spends running it.
   */
  appendAtHead(append: HeadAppend): Promise<number | undefined> {
    return appendAtHead(this.#state, append);
  }

  /**
   * Appends to several runs of one session in one statement (see SqlBackend.appendAtHeads): a
   * call of the PL/pgSQL function migration 0002 creates in the store's schema, or, when the
   * appends name or carry blobs, of 0005's, which calls it and then writes the blobs. Every append
   * whose head still is the cached one is written; the others write nothing and answer
   * undefined. The session's counter moves once, by the events of the written appends, which
   * take consecutive cursors. The appends go sorted by run: the function locks their runs rows
   * in that order, then the session's row, as other batches and the transactional path do; then
   * the blobs the written appends carry and their claims, each once, in ref order.
   * A function rather than one statement of CTEs over unnest: its inner statements are
   * single-row, planned once per connection, and always use the primary keys, where the CTE
   * was planned again on every call (about 1 ms of server CPU for a batch of 8). A lone append
   * keeps `appendAtHead`'s statement: through the function it took 1.21-1.36 ms at p50 against
   * 0.96-1.05 ms (a recorded model call, alternating processes). So do appends whose blobs
   * together pass one statement's bytes, one after the other.
   */
  async appendAtHeads(appends: HeadAppend[]): Promise<(number | undefined)[]> {
    if (appends.length === 1) return [await this.appendAtHead(appends[0] as HeadAppend)];
    let bytes = 0;
    for (const append of appends) for (const blob of append.blobs) bytes += blob.stored.byteLength;
    if (bytes > BLOB_BYTES_PER_STATEMENT) {
      const lasts: (number | undefined)[] = [];
      for (const append of appends) lasts.push(await this.appendAtHead(append));
      return lasts;
    }
    return appendRuns(this.#state, appends);
  }

  classify(error: unknown): DriverErrorKind {
    const code = driverError(error).code;
    if (code === "23505") return "unique";
    if (code === "40001" || code === "40P01" || code === "55P03") return "transient";
    // A named statement of the one-statement append that the connection no longer has: the
    // application ran DISCARD ALL or DEALLOCATE ALL on the shared connection, or a pooler
    // handed the statement to another server connection. Nothing ran; the connection (whose
    // driver still believes it prepared) is destroyed, and the append goes the transactional
    // way, whose statements are unnamed.
    if (code === "26000") return "transient";
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
    return driverTimeout(error, this.#state.bounds);
  }

  async listSessions(after: string | undefined, limit: number | undefined): Promise<SessionRow[]> {
    const { sessions } = this.tables;
    // Code-point order whatever the database's collation, like SQLite and MySQL's VARBINARY.
    // The index sessions_code_point (schema.ts) is on this very expression, and serves the
    // condition, the order and the limit: a page reads `limit` entries, never the table.
    const id = sql`${sessions.sessionId} collate "C"`;
    const query = this.db
      .select()
      .from(sessions)
      .where(after === undefined ? undefined : sql`${id} > ${after}`)
      .orderBy(id);
    return limit === undefined ? query : query.limit(limit);
  }

  /**
   * Each statement stores a chunk of blobs and their claims together (one transaction: a
   * collectBlobs page sees both or neither, see SqlBackend.putBlobs); a put of several chunks
   * is one transaction. A put that is not `durable` commits without waiting for its WAL flush
   * (synchronous_commit off for that transaction alone): the WAL is one sequence, so the flush
   * of the append that names these blobs, committed after, makes them durable first. That
   * saves an fsync in front of every recorded call that keeps content in blobs.
   */
  putBlobs(rows: BlobRow[], durable: boolean, sessionId: string | undefined): Promise<void> {
    return putBlobRows(this.#state, this.db, rows, durable, sessionId);
  }

  describe(): StoreDescription {
    return {
      kind: "postgres",
      location: this.#state.location,
      durability: {
        schema: this.#state.schema,
        synchronous_commit: this.#state.synchronousCommit,
        note: "an acknowledged append survives a server crash only with synchronous_commit on",
      },
    };
  }

  async close(): Promise<void> {
    if (this.#state.owned) await this.#state.pool.end();
  }
}
