import { and, asc, type Column, eq, gt, gte, inArray, lt, type SQL, sql } from "drizzle-orm";
import { bufferOf } from "../../store/blob.js";
import type { EventRow, HeadRow, RunRow } from "./rows.js";
import type { BlobRow, SqlBackend } from "./sql-backend.js";
import type { WriteStep } from "./write-program.js";

/**
 * The queries the PostgreSQL and MySQL stores write the same way: the same drizzle builder
 * chains on tables of the same shape. Drizzle types its builders per dialect, so they are typed
 * here on the surface both dialects' databases share (a backend passes its own database and
 * tables); what differs (upserts, deletes that count rows, collation) stays in the backends.
 */

interface Select extends PromiseLike<Record<string, unknown>[]> {
  where(condition: SQL | undefined): Select;
  leftJoin(table: unknown, on: SQL | undefined): Select;
  orderBy(...columns: SQL[]): Select;
  limit(count: number): Select;
  for(strength: "update"): Select;
}

/** What these queries use of a drizzle PostgreSQL or MySQL database (or transaction). */
export interface QueryDb {
  select(fields: Record<string, Column>): { from(table: unknown): Select };
  insert(table: unknown): { values(rows: object | object[]): PromiseLike<unknown> };
  update(table: unknown): {
    set(values: Record<string, unknown>): {
      where(condition: SQL | undefined): PromiseLike<unknown>;
    };
  };
}

/** The columns these queries name, on each dialect's tables (schema.ts). */
export interface QueryTables {
  events: {
    sessionId: Column;
    commitCursor: Column;
    runId: Column;
    seq: Column;
    eventId: Column;
    body: Column;
  };
  runs: {
    sessionId: Column;
    runId: Column;
    runLength: Column;
    status: Column;
    lastHash: Column;
    parentRunId: Column;
    startedAt: Column;
  };
  sessions: { sessionId: Column; lastCursor: Column };
  blobs: { blobRef: Column; content: Column };
}

/** An id column's value as a string (MySQL's VARBINARY ids come back as Buffers). */
export function idText(value: unknown): string {
  return Buffer.isBuffer(value) ? value.toString("utf8") : String(value);
}

const bodies = (rows: Record<string, unknown>[]) => rows.map((row) => row.body as string);

/**
 * Rows or values per statement where a write or lookup names a whole batch: an append of
 * 10,000 events in one multi-row INSERT was 80,000 bind parameters, past PostgreSQL's 65,535
 * (and a 70,000-id lookup past it too), and drizzle overflowed the stack building still larger
 * ones. The statements run in the caller's transaction, so the batch stays all or nothing.
 */
export const ROWS_PER_STATEMENT = 1000;

/**
 * Characters of event bodies per INSERT (a body longer than this goes in a statement of its
 * own): a statement is one message, and a server refuses one past its limit (MariaDB's
 * max_allowed_packet, 16 MiB by default; PostgreSQL's 1 GiB). A backend may ask for less.
 */
export const BODY_CHARS_PER_STATEMENT = 8 * 1024 * 1024;

/** Stored blob bytes per INSERT (a larger blob goes in a statement of its own). */
export const BLOB_BYTES_PER_STATEMENT = 16 * 1024 * 1024;

/**
 * `items` in consecutive slices of at most `size`, and of at most `budget` in total `weigh`
 * (an item heavier than the budget alone in its slice).
 */
export function chunked<T>(
  items: readonly T[],
  size = ROWS_PER_STATEMENT,
  weigh: (item: T) => number = () => 0,
  budget = Number.POSITIVE_INFINITY,
): T[][] {
  const chunks: T[][] = [];
  let chunk: T[] = [];
  let weight = 0;
  for (const item of items) {
    const own = weigh(item);
    if (chunk.length > 0 && (chunk.length >= size || weight + own > budget)) {
      chunks.push(chunk);
      chunk = [];
      weight = 0;
    }
    chunk.push(item);
    weight += own;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * The VALUES of the PostgreSQL and MySQL blob upserts, one list per INSERT: at most
 * ROWS_PER_STATEMENT blobs (three bind parameters each: 21,846 blobs in one INSERT were past
 * PostgreSQL's 65,535) and `bytes` stored bytes. The backend stamps each row's touched_at with
 * the database's clock once the rows it stores again are locked (a stamp taken before a wait for
 * one was past the grace after a long wait). The rows keep their order, which `blobRows` made key order: an INSERT
 * locks its rows in the order of its VALUES, so two puts of the same blobs (a shared system
 * prompt, say) never wait on each other in a cycle.
 */
export function blobValues(
  rows: readonly BlobRow[],
  bytes: number,
): { blobRef: string; content: Buffer }[][] {
  const weigh = (row: BlobRow) => row.stored.byteLength;
  return chunked(rows, ROWS_PER_STATEMENT, weigh, bytes).map((chunk) =>
    chunk.map((row) => ({
      blobRef: row.ref,
      content: bufferOf(row.stored),
    })),
  );
}

/** A run's head row; `lock` takes it FOR UPDATE (inside a write transaction). */
export async function runHeadRow(
  db: QueryDb,
  { runs }: QueryTables,
  sessionId: string,
  runId: string,
  lock = false,
): Promise<HeadRow | undefined> {
  const query = db
    .select({ runLength: runs.runLength, status: runs.status, lastHash: runs.lastHash })
    .from(runs)
    .where(and(eq(runs.sessionId, sessionId), eq(runs.runId, runId)));
  const rows = await (lock ? query.for("update") : query);
  return rows[0] as HeadRow | undefined;
}

/** Bodies of a run's events with `fromSeq <= seq < uptoSeq`, in seq order, at most `limit`. */
export async function runBodies(
  db: QueryDb,
  { events }: QueryTables,
  sessionId: string,
  runId: string,
  range: { fromSeq?: number; uptoSeq?: number; limit?: number | undefined },
): Promise<string[]> {
  const query = db
    .select({ body: events.body })
    .from(events)
    .where(
      and(
        eq(events.sessionId, sessionId),
        eq(events.runId, runId),
        range.fromSeq === undefined ? undefined : gte(events.seq, range.fromSeq),
        range.uptoSeq === undefined ? undefined : lt(events.seq, range.uptoSeq),
      ),
    )
    .orderBy(asc(events.seq));
  return bodies(await (range.limit === undefined ? query : query.limit(range.limit)));
}

/** Bodies of a session's events after commit cursor `after`, in cursor order. */
export async function sessionBodies(
  db: QueryDb,
  { events }: QueryTables,
  sessionId: string,
  after: number,
  limit: number | undefined,
): Promise<string[]> {
  const query = db
    .select({ body: events.body })
    .from(events)
    .where(and(eq(events.sessionId, sessionId), gt(events.commitCursor, after)))
    .orderBy(asc(events.commitCursor));
  return bodies(await (limit === undefined ? query : query.limit(limit)));
}

/** A session's runs in the order they were created (their first event's cursor). */
export async function runRows(
  db: QueryDb,
  { events, runs }: QueryTables,
  sessionId: string,
): Promise<RunRow[]> {
  // Every run row is listed, in the order of its run.started's cursor: a left join, where an
  // inner one hid a run whose run.started was deleted from verify, the one reader that must
  // see it. Such a run is placed by its first event left (the subquery, run for it alone: a
  // bare subquery for every run made the list twice as slow on PostgreSQL); a run with no
  // event left comes last.
  const later = sql`(SELECT later.commit_cursor FROM ${events} later
    WHERE later.session_id = ${runs.sessionId} AND later.run_id = ${runs.runId}
    ORDER BY later.seq LIMIT 1)`;
  const rows = await db
    .select({
      runId: runs.runId,
      runLength: runs.runLength,
      status: runs.status,
      lastHash: runs.lastHash,
      parentRunId: runs.parentRunId,
      startedAt: runs.startedAt,
    })
    .from(runs)
    .leftJoin(
      events,
      and(eq(events.sessionId, runs.sessionId), eq(events.runId, runs.runId), eq(events.seq, 0)),
    )
    .where(eq(runs.sessionId, sessionId))
    .orderBy(
      asc(
        sql`coalesce(${events.commitCursor}, ${later}, ${sql.raw(String(Number.MAX_SAFE_INTEGER))})`,
      ),
      asc(runs.runId),
    );
  return rows.map((row) => ({
    ...(row as unknown as RunRow),
    runId: idText(row.runId),
    parentRunId: row.parentRunId === null ? null : idText(row.parentRunId),
  }));
}

/**
 * The steps of a write program that both dialects run with the same query; undefined for the
 * ones each dialect writes its own way (upserts, counted deletes, index inserts).
 */
export function sharedStep(
  db: QueryDb,
  tables: QueryTables,
  step: WriteStep,
  bodyCharsPerStatement = BODY_CHARS_PER_STATEMENT,
): PromiseLike<unknown> | undefined {
  const { runs, sessions } = tables;
  switch (step.kind) {
    case "lock-head":
      return runHeadRow(db, tables, step.sessionId, step.runId, true);
    case "find-events":
      return findEvents(db, tables, step.sessionId, step.eventIds);
    case "read-run":
      return runBodies(db, tables, step.sessionId, step.runId, { uptoSeq: step.uptoSeq });
    case "lock-session":
      return db
        .select({ lastCursor: sessions.lastCursor })
        .from(sessions)
        .where(eq(sessions.sessionId, step.sessionId))
        .for("update")
        .then((rows) => (rows[0] === undefined ? undefined : Number(rows[0].lastCursor)));
    case "open-runs":
      return db
        .select({ runId: runs.runId })
        .from(runs)
        .where(and(eq(runs.sessionId, step.sessionId), eq(runs.status, "running")))
        .then((rows) => rows.map((row) => idText(row.runId)));
    case "insert-events":
      return insertEvents(db, tables, step.rows, bodyCharsPerStatement);
    case "write-head":
      return writeHead(db, tables, step);
    default:
      return undefined;
  }
}

async function writeHead(
  db: QueryDb,
  { runs }: QueryTables,
  step: Extract<WriteStep, { kind: "write-head" }>,
): Promise<undefined> {
  if (step.created) {
    await db.insert(runs).values({
      sessionId: step.sessionId,
      runId: step.runId,
      runLength: step.head.length,
      status: step.head.status,
      lastHash: step.head.lastHash,
      parentRunId: step.parentRunId,
      startedAt: step.startedAt,
    });
  } else {
    await db
      .update(runs)
      .set({ runLength: step.head.length, status: step.head.status, lastHash: step.head.lastHash })
      .where(and(eq(runs.sessionId, step.sessionId), eq(runs.runId, step.runId)));
  }
  return undefined;
}

async function findEvents(
  db: QueryDb,
  { events }: QueryTables,
  sessionId: string,
  eventIds: string[],
): Promise<string[]> {
  const found: string[] = [];
  for (const ids of chunked(eventIds)) {
    const rows = await db
      .select({ body: events.body })
      .from(events)
      .where(and(eq(events.sessionId, sessionId), inArray(events.eventId, ids)));
    for (const row of rows) found.push(row.body as string);
  }
  return found;
}

async function insertEvents(
  db: QueryDb,
  { events }: QueryTables,
  rows: EventRow[],
  bodyChars: number,
) {
  for (const chunk of chunked(rows, ROWS_PER_STATEMENT, (row) => row.body.length, bodyChars))
    await db.insert(events).values(chunk);
  return undefined;
}

/**
 * The reads of `SqlBackend` that PostgreSQL and MySQL run with the same queries, for their
 * backends to inherit. It holds the backend's drizzle database and tables (typed for its
 * dialect), which the backend's own queries use too.
 */
export abstract class SharedReads<Db extends object, Tables extends QueryTables>
  implements Pick<SqlBackend, "runHead" | "readRun" | "readSession" | "listRuns" | "getBlobs">
{
  protected readonly db: Db;
  protected readonly tables: Tables;

  protected constructor(db: Db, tables: Tables) {
    this.db = db;
    this.tables = tables;
  }

  /** The database on the surface the shared queries use. */
  get #query(): QueryDb {
    return this.db as unknown as QueryDb;
  }

  runHead(sessionId: string, runId: string): Promise<HeadRow | undefined> {
    return runHeadRow(this.#query, this.tables, sessionId, runId);
  }

  readRun(sessionId: string, runId: string, fromSeq: number, limit?: number): Promise<string[]> {
    return runBodies(this.#query, this.tables, sessionId, runId, { fromSeq, limit });
  }

  readSession(sessionId: string, after: number, limit?: number): Promise<string[]> {
    return sessionBodies(this.#query, this.tables, sessionId, after, limit);
  }

  listRuns(sessionId: string): Promise<RunRow[]> {
    return runRows(this.#query, this.tables, sessionId);
  }

  /** Stored blobs by ref, 1,000 refs per query; a ref not stored is absent from the map. */
  async getBlobs(refs: string[]): Promise<Map<string, Uint8Array>> {
    const { blobs } = this.tables;
    const out = new Map<string, Uint8Array>();
    for (const chunk of chunked(refs)) {
      const rows = await this.#query
        .select({ ref: blobs.blobRef, content: blobs.content })
        .from(blobs)
        .where(inArray(blobs.blobRef, chunk));
      for (const row of rows) out.set(row.ref as string, row.content as Uint8Array);
    }
    return out;
  }
}
