import { and, asc, type Column, eq, gt, inArray, lte, type SQL, sql } from "drizzle-orm";
import { drizzle, type MySql2Database } from "drizzle-orm/mysql2";
import type mysql from "mysql2/promise";
import {
  InvalidArgumentError,
  InvalidEventError,
  LedgerError,
  noLedgerError,
} from "../../events/errors.js";
import { bufferOf } from "../../store/blob.js";
import type { InitOptions, StoreDescription } from "../../store/event-store.js";
import { type HeadAppend, inLockOrder } from "../sql/head-cache.js";
import { MIGRATION_WAIT_MS } from "../sql/migrations.js";
import type { EventRow, SessionRow } from "../sql/rows.js";
import {
  BODY_CHARS_PER_STATEMENT,
  blobValues,
  chunked,
  idText,
  type QueryDb,
  ROWS_PER_STATEMENT,
  SharedReads,
  sharedStep,
} from "../sql/shared-queries.js";
import {
  type BlobRow,
  type DriverErrorKind,
  driverError,
  type SqlBackend,
} from "../sql/sql-backend.js";
import {
  type BlobPage,
  runAsync,
  type WriteProgram,
  type WriteStep,
} from "../sql/write-program.js";
import { hasLedger, migrateMysql } from "./mysql-migrate.js";
import { own } from "./own-query.js";
import { mysqlTables } from "./schema.js";
import {
  checkSessionSettings,
  SESSION_SETTINGS_QUERY,
  type SessionSettings,
} from "./session-settings.js";
import { quoteIdent, readStorageSettings, type StorageSettings } from "./storage-settings.js";

/**
 * Now on the server's clock, in epoch ms: blob put times and the retention grace use it. UTC
 * arithmetic, so the session's time zone (and its daylight saving hour) plays no part.
 */
const SERVER_EPOCH_MS =
  "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";
const serverEpochMs = sql.raw(SERVER_EPOCH_MS);

type Tables = ReturnType<typeof mysqlTables>;
type Db = MySql2Database;

/** Errors after which the connection is still usable (the statement or transaction failed). */
const statementErrnos = new Set([1062, 1213, 1205, 1406, 1264, 1366]);

/**
 * The batch shapes worth keeping prepared on a connection: one append of a few events (every
 * recorded call), or a few appends of one event each, of one session (its parallel writers) or
 * of as many sessions (a store's writers on their own sessions). Other shapes (sizes or
 * sessions mixed) are rare and many, so they are closed after use.
 */
function isCommonShape(appends: HeadAppend[]): boolean {
  const few = 16;
  // Blobs stored with an append: a recorded call carries one to three (a message, its list).
  // In a block of several, the shape follows which appends carry blobs and how their refs
  // interleave: kept only for a lone append.
  const blobs = appends.reduce((count, append) => count + append.blobs.length, 0);
  if (blobs > 0 && (appends.length > 1 || blobs > FEW_BLOBS)) return false;
  if (appends.length === 1) return (appends[0]?.events.length ?? 0) <= few;
  if (appends.length > few || appends.some((append) => append.events.length !== 1)) return false;
  // Appends that name blobs have a shape of their own: kept when all or none of them do.
  const naming = appends.filter((append) => append.refs.length > 0).length;
  if (naming !== 0 && naming !== appends.length) return false;
  const sessions = new Set(appends.map((append) => append.sessionId)).size;
  return sessions === 1 || sessions === appends.length;
}

/**
 * Appends sorted by (session, run), cut into runs of one session each, every append with its
 * index in that order (the statement's variable names).
 */
function sessionGroups(sorted: HeadAppend[]): { append: HeadAppend; i: number }[][] {
  const groups: { append: HeadAppend; i: number }[][] = [];
  sorted.forEach((append, i) => {
    const last = groups[groups.length - 1];
    if (last !== undefined && last[0]?.append.sessionId === append.sessionId)
      last.push({ append, i });
    else groups.push([{ append, i }]);
  });
  return groups;
}

/** The settings a mysql2/promise pool makes its connections with (undefined for other pools). */
function connectionConfig(
  pool: mysql.Pool,
): { database?: unknown; clientFlags?: number } | undefined {
  return (pool as unknown as { pool?: { config?: { connectionConfig?: object } } }).pool?.config
    ?.connectionConfig;
}

/**
 * The database the pool's configuration (or URL) names, if any. The store names its tables
 * with it rather than leave them to each connection's current database: an application may
 * switch a pooled connection to another database (USE, changeUser), as multi-tenant
 * applications do, and the ledger's statements must not follow it there.
 */
function configuredDatabase(pool: mysql.Pool): string | undefined {
  const config = connectionConfig(pool);
  return typeof config?.database === "string" && config.database.length > 0
    ? config.database
    : undefined;
}

/**
 * Whether a session that still exists (one with its `sessions` row) names the blob `ref`: the
 * blob's index rows (their primary key's prefix), then each one's session by its key.
 * STRAIGHT_JOIN keeps that order: MariaDB 10.11, misled by its estimate of rows per blob,
 * read the whole `sessions` key for every blob of a page instead (a pass over 20,000 blobs
 * named by 2,000 sessions took 25 s, against 0.4 s in this order).
 */
function claimedByLiveSession({ blobRefs, sessions }: Tables, ref: SQL | Column): SQL {
  return sql`EXISTS (SELECT 1 FROM ${blobRefs} r STRAIGHT_JOIN ${sessions} s
    ON s.session_id = r.session_id WHERE r.blob_ref = ${ref})`;
}

/**
 * In a compound block: the (blob, session) claims of a JSON array of refs, for one session;
 * binds the session, then the array. One parameter for any number of refs, so the block
 * keeps its shape.
 */
function claimsStatement(prefix: string): string {
  return `INSERT IGNORE INTO ${prefix}blob_refs (blob_ref, session_id)
    SELECT j.ref, ? FROM JSON_TABLE(?, '$[*]' COLUMNS (ref VARCHAR(80) PATH '$')) AS j;`;
}

/** In a compound block: the upsert of `count` blobs, binding each one's ref, then its bytes. */
function blobsStatement(prefix: string, count: number): string {
  return `INSERT INTO ${prefix}blobs (blob_ref, content, touched_at)
    VALUES ${Array.from({ length: count }, () => `(?, ?, ${SERVER_EPOCH_MS})`).join(", ")}
    ON DUPLICATE KEY UPDATE touched_at = VALUES(touched_at);`;
}

/** Puts of at most this many blobs keep their block prepared (see MysqlBackend's #putBlock). */
const FEW_BLOBS = 4;

/** mysql2's client capability flag for result sets from compound statements (on by default). */
const MULTI_RESULTS = 0x20000;

/** Whether the pool's connections take result sets from compound statements, as configured. */
function multiResults(pool: mysql.Pool): boolean {
  const config = connectionConfig(pool);
  return config?.clientFlags === undefined || (config.clientFlags & MULTI_RESULTS) !== 0;
}

/**
 * The appends of a batch that go into its one statement, each with its index in the batch: in
 * order, as long as they hold at most ROWS_PER_STATEMENT events and `bodyChars` characters of
 * event bodies (and blob refs) together. The others stay unanswered (undefined), and the store
 * writes each with the transactional program, in bounded INSERTs: a block binds 7 values per
 * event, and MariaDB refuses a prepared statement with more than 65,535 placeholders ("too many
 * placeholders", for one append of about 9,400 events), or longer than max_allowed_packet.
 */
function statementPart(
  appends: HeadAppend[],
  bodyChars: number,
): { append: HeadAppend; index: number }[] {
  const part: { append: HeadAppend; index: number }[] = [];
  let events = 0;
  let chars = 0;
  for (const [index, append] of appends.entries()) {
    let size = 0;
    for (const event of append.events) size += event.bodyPrefix.length;
    // The refs travel again, as the JSON array the statement indexes them from.
    for (const ref of append.refs) size += ref.length + 3;
    // Blobs travel as binary values: a byte each, where a character counts up to six.
    for (const blob of append.blobs) size += Math.ceil(blob.stored.byteLength / 6);
    if (events + append.events.length > ROWS_PER_STATEMENT || chars + size > bodyChars) break;
    part.push({ append, index });
    events += append.events.length;
    chars += size;
  }
  return part;
}

/** Room for the statement around the values, within max_allowed_packet. */
const packetOverhead = 64 * 1024;

/**
 * Body characters one statement may carry within `maxPacket` bytes: a character is at most 3
 * bytes of UTF-8 (a surrogate pair, 4 bytes, is 2 characters), escaped into the statement's
 * text at most twice over.
 */
function bodyCharsPerStatement(maxPacket: number): number {
  return Math.max(
    1,
    Math.min(BODY_CHARS_PER_STATEMENT, Math.floor((maxPacket - packetOverhead) / 6)),
  );
}

/**
 * Bytes of an event body in a statement: its UTF-8, each character mysql2 escapes counted
 * twice (a JSON text holds no raw control character: only quotes and backslashes).
 */
function escapedBytes(body: string): number {
  let escaped = 0;
  for (let index = 0; index < body.length; index++) {
    const code = body.charCodeAt(index);
    if (code === 0x22 || code === 0x27 || code === 0x5c) escaped++;
  }
  return Buffer.byteLength(body) + escaped;
}

/**
 * Refuses, before anything is written, an event no statement can carry on this server: its row
 * alone is longer than max_allowed_packet, which the server answers by dropping the connection
 * ("Got a packet bigger than 'max_allowed_packet' bytes"), a refusal no retry gets past.
 */
function assertRowsFit(rows: EventRow[], maxPacket: number): void {
  rows.forEach((row, index) => {
    if (row.body.length * 6 + packetOverhead <= maxPacket) return;
    const bytes = escapedBytes(row.body);
    if (bytes + packetOverhead <= maxPacket) return;
    throw new InvalidEventError(
      `$.events[${index}]`,
      `the event is ${bytes} bytes as stored, more than this server's max_allowed_packet (${maxPacket} bytes) leaves for one statement: keep large content in the blob store (putBlob, or the recorder's compaction) or raise max_allowed_packet`,
    );
  });
}

/**
 * MySQL and MariaDB through mysql2. A write runs on one pooled connection at READ COMMITTED
 * (no gap locks: two writers creating one run meet on the unique key, not in a deadlock); the
 * run head is locked with SELECT ... FOR UPDATE, the session counter row by its upsert. A
 * connection that failed is destroyed, never returned to the pool.
 */
export class MysqlBackend extends SharedReads<Db, Tables> implements SqlBackend {
  readonly #pool: mysql.Pool;
  readonly #owned: boolean;
  readonly #database: string | undefined;
  readonly #location: string;
  readonly #bound = new WeakMap<mysql.PoolConnection, Db>();
  /**
   * Whether appends can run as one compound block, once asked: the server is MariaDB (which has
   * anonymous blocks) and the pool's connections take the result set the block answers with.
   */
  #blocks: boolean | undefined;
  /** The server's max_allowed_packet in bytes: no statement may be longer. */
  #maxPacket: number | undefined;
  /** What init found: the ledger's tables are InnoDB (checked), and how InnoDB commits. */
  #storage: StorageSettings | undefined;

  constructor(options: { pool: mysql.Pool; owned: boolean; database?: string; location: string }) {
    const database = options.database ?? configuredDatabase(options.pool);
    super(drizzle({ client: options.pool }), mysqlTables(database));
    this.#pool = options.pool;
    this.#owned = options.owned;
    this.#database = database;
    this.#location = options.location;
  }

  async init(options?: InitOptions): Promise<void> {
    const connection = await this.#pool.getConnection();
    try {
      // The application's pool may bound its statements (MariaDB's max_statement_time): a
      // migration of a large database, or the wait for another process's, is no such query.
      await connection.query(own("SET SESSION max_statement_time = 0")).catch((error: unknown) => {
        // MySQL has no such variable (its max_execution_time bounds SELECTs only).
        if (driverError(error).errno !== 1193) throw error;
      });
      // The shipped SQL names tables without a database: run it in the store's database. The
      // connection is never reused (below), whatever its default database is then.
      if (this.#database !== undefined)
        await connection.query(own(`USE ${quoteIdent(this.#database)}`));
      const [current] = (await connection.query(own(SESSION_SETTINGS_QUERY))) as unknown as [
        SessionSettings[],
      ];
      const path = this.#owned ? "$.uri" : "$.pool";
      checkSessionSettings(current[0], connection, path);
      if (options?.create === false && !(await hasLedger(connection)))
        throw noLedgerError(this.#location, "the database has no agent-ledger tables");
      const storage = await readStorageSettings(connection);
      const lockName = `agent-ledger:migrate:${current[0]?.name ?? ""}`.slice(0, 64);
      const waitSeconds = MIGRATION_WAIT_MS / 1000;
      const [locked] = (await connection.query(own("SELECT GET_LOCK(?, ?) AS got"), [
        lockName,
        waitSeconds,
      ])) as unknown as [{ got: number | null }[]];
      if (locked[0]?.got !== 1)
        throw new Error(
          `another process held the migration lock ${lockName} for ${waitSeconds} s (still migrating, or stuck)`,
        );
      try {
        // MySQL commits DDL implicitly: the lock, not a transaction, keeps migrators apart.
        await migrateMysql(connection, storage, path);
      } finally {
        await connection.query(own("SELECT RELEASE_LOCK(?)"), [lockName]);
      }
      this.#storage = storage;
    } finally {
      // Never back to the pool: its session settings and default database were changed.
      connection.destroy();
    }
    // Known from the first append on: on MySQL no append is planned for a path it lacks.
    await this.#canRunBlocks();
  }

  /** False once the server is known to be MySQL, which has no anonymous compound blocks. */
  appendsAtHead(): boolean {
    return this.#blocks !== false;
  }

  async write<T>(program: () => WriteProgram<T>): Promise<T> {
    // Known since init; asked before taking a connection (a one-connection pool would wait on
    // itself), and once per write, not per step.
    const maxPacket = this.#maxPacket ?? (await this.#packetLimit());
    return this.#transaction((tx) =>
      runAsync(program(), (step) => this.#execute(tx, step, maxPacket)),
    );
  }

  /** `body` in one READ COMMITTED transaction on a pooled connection, rolled back on error. */
  async #transaction<T>(body: (tx: Db) => Promise<T>): Promise<T> {
    const connection = await this.#pool.getConnection();
    let healthy = true;
    try {
      await connection.query("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
      await connection.query("START TRANSACTION");
      let db = this.#bound.get(connection);
      if (db === undefined) {
        db = drizzle({ client: connection as unknown as mysql.Connection });
        this.#bound.set(connection, db);
      }
      const result = await body(db);
      await connection.query("COMMIT");
      return result;
    } catch (error) {
      const errno = driverError(error).errno;
      if (LedgerError.isInstance(error) || (errno !== undefined && statementErrnos.has(errno))) {
        await connection.query("ROLLBACK").catch(() => {
          healthy = false;
        });
      } else {
        healthy = false;
      }
      throw error;
    } finally {
      if (healthy) connection.release();
      else connection.destroy();
    }
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
  async appendAtHeads(appends: HeadAppend[]): Promise<(number | undefined)[]> {
    // Known since init; asked only by a store used without it.
    if (!(this.#blocks ?? (await this.#canRunBlocks()))) return appends.map(() => undefined);
    // Known since init, read without an await (this runs on every recorded call).
    const maxPacket = this.#maxPacket ?? (await this.#packetLimit());
    const part = statementPart(appends, bodyCharsPerStatement(maxPacket));
    const lasts: (number | undefined)[] = appends.map(() => undefined);
    if (part.length === 0) return lasts;
    const written = await this.#appendBlock(part.map(({ append }) => append));
    part.forEach(({ index }, i) => {
      lasts[index] = written[i];
    });
    return lasts;
  }

  async #appendBlock(appends: HeadAppend[]): Promise<(number | undefined)[]> {
    const prefix = this.#tablePrefix;
    const order = inLockOrder(appends);
    const values: (string | number | Buffer | null)[] = [];
    const moveRuns = order.map(({ append }, i) => {
      values.push(
        append.length,
        append.status,
        append.lastHash,
        append.sessionId,
        append.runId,
        append.expected.length,
        append.expected.lastHash,
      );
      return `UPDATE ${prefix}runs SET run_length = ?, status = ?, last_hash = ?
    WHERE session_id = ? AND run_id = ? AND run_length = ? AND last_hash <=> ?
      AND status = 'running';
  SET m${i} = ROW_COUNT();`;
    });
    const counters = sessionGroups(order.map(({ append }) => append)).map((group) => {
      const first = group[0] as { append: HeadAppend; i: number };
      values.push(first.append.now, first.append.sessionId);
      const inserts = group.map(({ append, i }) => {
        for (const event of append.events) {
          values.push(
            append.sessionId,
            append.runId,
            event.seq,
            event.eventId,
            event.eventType,
            event.recordedAt,
            event.bodyPrefix,
          );
        }
        const rows = append.events
          .map((_, k) => `(?, c + ${k + 1}, ?, ?, ?, ?, ?, CONCAT(?, c + ${k + 1}, '}'))`)
          .join(", ");
        // The blobs the batch names, indexed for its session (in code-point order: refs);
        // an append that carries blobs has them indexed after the block stores them (below).
        let indexRefs = "";
        if (append.refs.length > 0 && append.blobs.length === 0) {
          values.push(append.sessionId, JSON.stringify(append.refs));
          indexRefs = `\n      ${claimsStatement(prefix)}`;
        }
        return `IF m${i} = 1 THEN
      INSERT INTO ${prefix}events
        (session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)
        VALUES ${rows};${indexRefs}
      SET c = c + ${append.events.length};
      SET l${i} = c;
    END IF;`;
      });
      const total = group.map(({ append, i }) => `m${i} * ${append.events.length}`).join(" + ");
      // A counter row missing (never made by the store) fails the batch as a deadlock would:
      // the store then writes each append on its own, and the transactional path answers.
      return `SET t = ${total};
  IF t > 0 THEN
    UPDATE ${prefix}sessions
      SET last_cursor = (@agent_ledger_cursor := last_cursor + t), updated_at = ?
      WHERE session_id = ?;
    IF ROW_COUNT() = 0 THEN
      SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213, MESSAGE_TEXT = 'session counter row missing';
    END IF;
    SET c = @agent_ledger_cursor - t;
    ${inserts.join("\n    ")}
  END IF;`;
    });
    const carried = this.#carriedBlobs(order, values);
    const statement = `BEGIN NOT ATOMIC
  DECLARE c BIGINT UNSIGNED;
  DECLARE t BIGINT UNSIGNED;
  ${order.map((_, i) => `DECLARE m${i} INT DEFAULT 0; DECLARE l${i} BIGINT UNSIGNED DEFAULT NULL;`).join("\n  ")}
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
  START TRANSACTION;
  ${moveRuns.join("\n  ")}
  ${counters.join("\n  ")}${carried}
  COMMIT;
  SELECT ${order.map((_, i) => `l${i}`).join(", ")};
END`;
    const row = await this.#block(statement, values, isCommonShape(appends));
    const lasts: (number | undefined)[] = appends.map(() => undefined);
    order.forEach(({ index }, i) => {
      const last = row?.[`l${i}`];
      if (last != null) lasts[index] = Number(last);
    });
    return lasts;
  }

  /**
   * The part of an append block that stores the blobs its appends carry, binding their values:
   * after every runs row and counter row (deleteSession locks a session's counter row before
   * the blobs it collects), each blob once, in ref order across the whole block (two blocks
   * carrying the same blobs lock them in one order), and only if an append that carries it
   * was written (its `m` flag). Then those appends' claims, as SqlBackend.putBlobs orders
   * them: blob first, so a collectBlobs page that holds the blob's row makes the claim wait.
   */
  #carriedBlobs(order: { append: HeadAppend }[], values: (string | number | Buffer | null)[]) {
    const prefix = this.#tablePrefix;
    const carriers = new Map<string, { blob: BlobRow; flags: string[] }>();
    order.forEach(({ append }, i) => {
      for (const blob of append.blobs) {
        const entry = carriers.get(blob.ref) ?? { blob, flags: [] };
        entry.flags.push(`m${i} = 1`);
        carriers.set(blob.ref, entry);
      }
    });
    if (carriers.size === 0) return "";
    // Neighbours in ref order stored under one condition share an INSERT: one for all the
    // blobs of a lone append (a recorded call), however many it carries.
    const groups: { condition: string; blobs: BlobRow[] }[] = [];
    for (const ref of [...carriers.keys()].sort()) {
      const { blob, flags } = carriers.get(ref) as { blob: BlobRow; flags: string[] };
      const condition = flags.join(" OR ");
      const last = groups[groups.length - 1];
      if (last?.condition === condition) last.blobs.push(blob);
      else groups.push({ condition, blobs: [blob] });
    }
    const parts: string[] = [];
    for (const { condition, blobs } of groups) {
      for (const blob of blobs) values.push(blob.ref, bufferOf(blob.stored));
      parts.push(`IF ${condition} THEN
    ${blobsStatement(prefix, blobs.length)}
  END IF;`);
    }
    order.forEach(({ append }, i) => {
      if (append.blobs.length === 0) return;
      values.push(append.sessionId, JSON.stringify(append.refs));
      parts.push(`IF m${i} = 1 THEN
    ${claimsStatement(prefix)}
  END IF;`);
    });
    return `\n  ${parts.join("\n  ")}`;
  }

  /**
   * Runs a compound statement as a server-side prepared statement (one text per shape, cached
   * per connection by the driver when `keep`: the block is parsed once per connection, and the
   * values travel in the binary protocol instead of being escaped into the text). Returns the
   * row of its final SELECT, if it reached it. A connection that failed is destroyed.
   */
  async #block(
    statement: string,
    values: (string | number | Buffer | null)[],
    keep: boolean,
  ): Promise<Record<string, unknown> | undefined> {
    const connection = await this.#pool.getConnection();
    let healthy = true;
    const query = own(statement);
    try {
      const [result] = (await connection.execute(query, values)) as unknown as [unknown];
      // With the SELECT: [rows, ok packet]; without (nothing written): one ok packet.
      const selected = Array.isArray(result) ? (result[0] as unknown) : undefined;
      return Array.isArray(selected)
        ? (selected[0] as Record<string, unknown> | undefined)
        : undefined;
    } catch (error) {
      const errno = driverError(error).errno;
      if (errno === undefined || !statementErrnos.has(errno)) healthy = false;
      throw error;
    } finally {
      if (healthy) {
        // A shape that may not come again is closed after use (COM_STMT_CLOSE: no round trip).
        // Every statement a connection keeps prepared counts against the server's global
        // max_prepared_stmt_count, which the application shares.
        if (!keep) connection.unprepare(query);
        connection.release();
      } else connection.destroy();
    }
  }

  async #canRunBlocks(): Promise<boolean> {
    if (this.#blocks === undefined) await this.#askServer();
    return this.#blocks as boolean;
  }

  /** The server's max_allowed_packet, once asked (with the server kind). */
  async #packetLimit(): Promise<number> {
    if (this.#maxPacket === undefined) await this.#askServer();
    return this.#maxPacket as number;
  }

  /**
   * Asks the server once (two first callers at once may both ask: the answer is the same).
   * A pool whose connections lack MULTI_RESULTS (an application's `flags: "-MULTI_RESULTS"`)
   * cannot run blocks: the server refuses a block that answers with a result set there (before
   * running it), so every append on the path would fail.
   */
  async #askServer(): Promise<void> {
    const [rows] = await this.#pool.query(
      own("SELECT VERSION() AS version, @@max_allowed_packet AS packet"),
    );
    const row = (rows as { version?: unknown; packet?: unknown }[])[0];
    this.#maxPacket = Number(row?.packet);
    this.#blocks = /mariadb/i.test(String(row?.version)) && multiResults(this.#pool);
  }

  async #execute(tx: Db, step: WriteStep, maxPacket: number): Promise<unknown> {
    if (step.kind === "insert-events") assertRowsFit(step.rows, maxPacket);
    const shared = sharedStep(
      tx as unknown as QueryDb,
      this.tables,
      step,
      bodyCharsPerStatement(maxPacket),
    );
    if (shared !== undefined) return shared;
    const { events, runs, sessions, blobs, blobRefs } = this.tables;
    switch (step.kind) {
      case "put-blobs":
        for (const values of this.#blobChunks(step.blobs, maxPacket))
          await tx
            .insert(blobs)
            .values(values)
            .onDuplicateKeyUpdate({ set: { touchedAt: serverEpochMs } });
        return undefined;
      case "index-refs":
        for (const refs of chunked(step.refs))
          await tx
            .insert(blobRefs)
            .ignore()
            .values(refs.map((blobRef) => ({ blobRef, sessionId: step.sessionId })));
        return undefined;
      case "collect-session-blobs": {
        // The session's refs a page at a time, in key order (one pass over the index), each
        // page's unshared blobs deleted by key: only refs come back, never more than a page.
        // (A multi-table DELETE would need none, but fails with "No database selected" on a
        // connection without a default database, and a DELETE ... IN (subquery) scans every
        // blob on servers that do not turn it into a join.)
        const { sessionId, graceMs } = step;
        let refs = 0;
        let deleted = 0;
        let after = "";
        for (;;) {
          const page = await tx
            .select({ ref: blobRefs.blobRef })
            .from(blobRefs)
            .where(and(eq(blobRefs.sessionId, sessionId), gt(blobRefs.blobRef, after)))
            .orderBy(asc(blobRefs.blobRef))
            .limit(ROWS_PER_STATEMENT);
          const chunk = page.map((row) => String(row.ref));
          if (chunk.length === 0) break;
          refs += chunk.length;
          after = chunk[chunk.length - 1] as string;
          const [result] = await tx
            .delete(blobs)
            .where(
              and(
                inArray(blobs.blobRef, chunk),
                lte(blobs.touchedAt, sql`${serverEpochMs} - ${graceMs}`),
                sql`not exists (select 1 from ${blobRefs} r where r.blob_ref = ${blobs.blobRef} and r.session_id <> ${sessionId})`,
              ),
            );
          deleted += result.affectedRows;
          if (chunk.length < ROWS_PER_STATEMENT) break;
        }
        return { refs, deleted };
      }
      case "collect-blobs":
        return this.#collectBlobs(tx, step);
      case "delete-session": {
        const [deletedEvents] = await tx.delete(events).where(eq(events.sessionId, step.sessionId));
        const [deletedRuns] = await tx.delete(runs).where(eq(runs.sessionId, step.sessionId));
        await tx.delete(blobRefs).where(eq(blobRefs.sessionId, step.sessionId));
        await tx.delete(sessions).where(eq(sessions.sessionId, step.sessionId));
        return { events: deletedEvents.affectedRows, runs: deletedRuns.affectedRows };
      }
      case "reserve-cursors": {
        await tx
          .insert(sessions)
          .values({
            sessionId: step.sessionId,
            lastCursor: step.count,
            createdAt: step.now,
            updatedAt: step.now,
          })
          .onDuplicateKeyUpdate({
            set: {
              lastCursor: sql`${sessions.lastCursor} + ${step.count}`,
              updatedAt: step.now,
            },
          });
        // The row is locked by this transaction: the read sees our own update.
        const rows = await tx
          .select({ lastCursor: sessions.lastCursor })
          .from(sessions)
          .where(eq(sessions.sessionId, step.sessionId));
        return Number(rows[0]?.lastCursor);
      }
      default:
        throw new Error(`no query for the write step ${step.kind}`);
    }
  }

  /**
   * A page of collectBlobs: one SELECT reads the page (the next `limit` keys of the primary
   * key) and answers its size, its last key and the blobs that look collectable, with whether
   * the index names them; only when some do, a DELETE by key removes them, checking every
   * condition again; only when those had index rows, a DELETE of the rows of sessions that
   * are gone, for the blobs no longer stored. Deletes by key, as collect-session-blobs: a
   * multi-table DELETE fails on a connection without a default database, and DELETE ... IN
   * (subquery) scans every blob on servers that do not make it a join.
   *
   * Why it never deadlocks with an append or a put of the same blobs: those upsert the rows in
   * ref order (blobRows sorts them, a compound block across all its appends), and this DELETE
   * (like collect-session-blobs') names its rows by primary key, which InnoDB reads as ranges of
   * the key in ascending order, locking each row as it reaches it; `sha256:<hex>` refs sort the
   * same in any collation. Both sides queue for the rows in one order, so one waits for the
   * other. (collect-lock-order.int.test.ts makes the interleaving that deadlocked PostgreSQL's
   * DELETE, whose plan chose the order, and counts the server's deadlock reports: none.)
   *
   * Why READ COMMITTED suffices on InnoDB: the SELECT is a consistent read and locks nothing;
   * the DELETE locks each candidate row and reads its newest committed version, so a put that
   * committed first (its upsert refreshes touched_at) keeps the blob, a put still running
   * holds the row until then (and the DELETE sees its touched_at), and one that comes after
   * the DELETE waits for its commit and inserts the blob again. The references are read as
   * committed when the DELETE runs: an append committed by then keeps its blobs; one
   * committing later belongs to a writer that put its blobs within the grace period. The
   * index rows deleted are those of blobs no longer stored and of sessions without their row:
   * an index row that a put or an append adds meanwhile for a live session stays.
   */
  async #collectBlobs(
    tx: Db,
    step: Extract<WriteStep, { kind: "collect-blobs" }>,
  ): Promise<BlobPage> {
    const { blobs, blobRefs, sessions } = this.tables;
    const page = await this.#blobPage(tx, step);
    if (page.candidates.length === 0) return { ...page.bounds, deleted: 0 };
    const [gone] = await tx.delete(blobs).where(
      and(
        inArray(
          blobs.blobRef,
          page.candidates.map((candidate) => candidate.ref),
        ),
        lte(blobs.touchedAt, sql`${serverEpochMs} - ${step.graceMs}`),
        sql`NOT ${claimedByLiveSession(this.tables, blobs.blobRef)}`,
      ),
    );
    const claimed = page.candidates.filter((candidate) => candidate.claimed);
    if (gone.affectedRows > 0 && claimed.length > 0)
      await tx.delete(blobRefs).where(
        and(
          inArray(
            blobRefs.blobRef,
            claimed.map((candidate) => candidate.ref),
          ),
          sql`NOT EXISTS (SELECT 1 FROM ${blobs} b WHERE b.blob_ref = ${blobRefs.blobRef})`,
          sql`NOT EXISTS (SELECT 1 FROM ${sessions} s WHERE s.session_id = ${blobRefs.sessionId})`,
        ),
      );
    return { ...page.bounds, deleted: gone.affectedRows };
  }

  /**
   * The page's size and last key, and its blobs that look collectable (`claimed`: the index
   * names them, for sessions that are gone), in one consistent read. Only those blobs and the
   * last one come back, not the whole page: the page is read twice on the server instead
   * (`p` for the blobs, `q` for the bounds), a few hundred entries of the primary key each.
   */
  async #blobPage(
    tx: Db,
    step: Extract<WriteStep, { kind: "collect-blobs" }>,
  ): Promise<{
    bounds: Omit<BlobPage, "deleted">;
    candidates: { ref: string; claimed: boolean }[];
  }> {
    const { blobs, blobRefs } = this.tables;
    const from = step.after === undefined ? sql`true` : sql`${blobs.blobRef} > ${step.after}`;
    const page = sql`(SELECT ${blobs.blobRef} AS blob_ref, ${blobs.touchedAt} AS touched_at
      FROM ${blobs} WHERE ${from} ORDER BY ${blobs.blobRef} LIMIT ${step.limit})`;
    const doomed = sql`p.touched_at <= ${serverEpochMs} - ${step.graceMs}
      AND NOT ${claimedByLiveSession(this.tables, sql`p.blob_ref`)}`;
    const rows = await tx
      .select({
        ref: sql<string>`c.ref`.mapWith(String),
        examined: sql<number>`c.examined`.mapWith(Number),
        last: sql<string>`c.last`.mapWith(String),
        doomed: sql<number>`c.doomed`.mapWith(Number),
        claimed: sql<number>`c.claimed`.mapWith(Number),
      })
      .from(sql`(SELECT p.blob_ref AS ref, l.examined, l.last, ${doomed} AS doomed,
          EXISTS (SELECT 1 FROM ${blobRefs} r WHERE r.blob_ref = p.blob_ref) AS claimed
        FROM ${page} p
        JOIN (SELECT count(*) AS examined, max(q.blob_ref) AS last FROM ${page} q) l) c`)
      .where(sql`c.doomed OR c.ref = c.last`);
    const first = rows[0];
    if (first === undefined) return { bounds: { examined: 0, last: undefined }, candidates: [] };
    return {
      bounds: { examined: first.examined, last: first.last },
      candidates: rows
        .filter((row) => row.doomed === 1)
        .map((row) => ({ ref: row.ref, claimed: row.claimed === 1 })),
    };
  }

  classify(error: unknown): DriverErrorKind {
    const errno = driverError(error).errno;
    if (errno === 1062) return "unique";
    if (errno === 1213 || errno === 1205) return "transient";
    return "unavailable";
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

  async putBlobs(rows: BlobRow[], _durable: boolean, sessionId: string | undefined): Promise<void> {
    const maxPacket = await this.#packetLimit();
    const chunks = this.#blobChunks(rows, maxPacket);
    const chunk = chunks.length === 1 ? chunks[0] : undefined;
    if (chunk !== undefined && (this.#blocks ?? (await this.#canRunBlocks()))) {
      await this.#putBlock(chunk, sessionId);
      return;
    }
    // Blobs and claims in one transaction (see SqlBackend.putBlobs), one commit: the steps an
    // append that carries blobs takes.
    await this.#transaction(async (tx) => {
      await this.#execute(tx, { kind: "put-blobs", blobs: rows }, maxPacket);
      if (sessionId !== undefined)
        await this.#execute(
          tx,
          { kind: "index-refs", sessionId, refs: rows.map((row) => row.ref) },
          maxPacket,
        );
    });
  }

  /**
   * The blobs' upsert VALUES, in chunks one statement carries within `maxPacket`; a blob too
   * large for any is refused (`invalid-argument` at its path) before anything is written.
   */
  #blobChunks(rows: BlobRow[], maxPacket: number): ReturnType<typeof blobValues> {
    // A blob travels in the statement's text as X'<hex>': twice its stored bytes.
    const budget = Math.max(1, Math.floor((maxPacket - packetOverhead) / 2));
    for (const row of rows) {
      if (row.stored.byteLength <= budget) continue;
      throw new InvalidArgumentError(
        row.path,
        `the blob is ${row.stored.byteLength} bytes as stored (compressed), more than this server's max_allowed_packet (${maxPacket} bytes) carries in one statement (as hex, twice its size): raise max_allowed_packet`,
      );
    }
    return blobValues(rows, budget, serverEpochMs);
  }

  /**
   * A put of one chunk on MariaDB: its blobs and claims in one compound statement, one round
   * trip and one commit, the contents bound as binary values (not hex in the text). Its shape
   * goes with the number of blobs: the few a recorded call puts (a message, its list node)
   * stay prepared on the connection, which saves the prepare's round trip on the next call;
   * larger puts are closed after use.
   */
  async #putBlock(
    values: ReturnType<typeof blobValues>[number],
    sessionId: string | undefined,
  ): Promise<void> {
    const prefix = this.#tablePrefix;
    const bound: (string | Buffer)[] = [];
    for (const row of values) bound.push(row.blobRef, row.content);
    let claims = "";
    if (sessionId !== undefined) {
      bound.push(sessionId, JSON.stringify(values.map((row) => row.blobRef)));
      claims = claimsStatement(prefix);
    }
    const statement = `BEGIN NOT ATOMIC
  DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
  START TRANSACTION;
  ${blobsStatement(prefix, values.length)}
  ${claims}
  COMMIT;
END`;
    await this.#block(statement, bound, values.length <= FEW_BLOBS);
  }

  /** The ledger's tables named with the configured database (see configuredDatabase), if any. */
  get #tablePrefix(): string {
    return this.#database === undefined ? "" : `${quoteIdent(this.#database)}.`;
  }

  describe(): StoreDescription {
    const description: StoreDescription = { kind: "mysql", location: this.#location };
    const durability: Record<string, string | number> = {};
    if (this.#database !== undefined) durability.database = this.#database;
    // Known once init has checked the tables (InnoDB, or init refused them).
    if (this.#storage !== undefined) {
      durability.engine = "InnoDB";
      durability.innodb_flush_log_at_trx_commit = this.#storage.flushLogAtCommit;
      durability.note =
        "an acknowledged append survives a server crash only with innodb_flush_log_at_trx_commit=1";
    }
    if (Object.keys(durability).length > 0) description.durability = durability;
    return description;
  }

  async close(): Promise<void> {
    if (this.#owned) await this.#pool.end();
  }
}
