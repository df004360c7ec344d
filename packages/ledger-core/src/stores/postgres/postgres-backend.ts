import { createHash } from "node:crypto";
import { eq, type SQL, sql } from "drizzle-orm";
import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import { LedgerError, noLedgerError } from "../../events/errors.js";
import { bufferOf } from "../../store/blob.js";
import type { InitOptions, StoreDescription } from "../../store/event-store.js";
import { type HeadAppend, inLockOrder } from "../sql/head-cache.js";
import { pendingMigrations } from "../sql/migrations.js";
import type { SessionRow } from "../sql/rows.js";
import {
  BLOB_BYTES_PER_STATEMENT,
  blobValues,
  chunked,
  type QueryDb,
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
import { postgresTables } from "./schema.js";

/** Now on the server's clock, in epoch ms: blob put times and the retention grace use it. */
const SERVER_EPOCH_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
const serverEpochMs = sql.raw(SERVER_EPOCH_MS);

type Tables = ReturnType<typeof postgresTables>;

/** The named (prepared) statements of the one-statement append: one event, or a batch. */
type NamedQuery = { name: string; text: string };

/** One append's statements: plain, indexing refs, or also storing blobs (see AppendQueries). */
interface AppendShapes {
  plain: NamedQuery;
  refs: NamedQuery;
  blobs: NamedQuery;
}

interface AppendQueries {
  /**
   * One append of one event (scalar parameters) or of several (arrays); `refs` also indexes
   * the blobs the batch names (the next parameter), `blobs` also stores the blobs the append
   * carries (two more: their refs and stored bytes).
   */
  single: AppendShapes;
  batch: AppendShapes;
  /**
   * Appends to several runs of one session, gathered by the store (group commit); `runsBlobs`
   * also with the blobs they name and carry (five more arrays).
   */
  runs: NamedQuery;
  runsBlobs: NamedQuery;
}

/** SQLSTATE classes after which the connection is still usable: the statement just failed. */
const statementErrors = /^(23|40|22|42|26)/;

/**
 * invalid_sql_statement_name and duplicate_prepared_statement: what a named statement gets
 * through a pooler in transaction mode (see PostgresBackend's #autocommit).
 */
const statementNameErrors: ReadonlySet<string> = new Set(["26000", "42P05"]);

/**
 * What a migration that lost a race to another process's (see init) hits: unique_violation in
 * a catalog, duplicate_schema, duplicate_table, duplicate_object, duplicate_function.
 */
const catalogRaceCodes: ReadonlySet<string> = new Set([
  "23505",
  "42P06",
  "42P07",
  "42710",
  "42723",
]);

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * PostgreSQL through node-postgres. A write checks a client out of the pool and runs the shared
 * program between BEGIN (READ COMMITTED) and COMMIT on a drizzle instance bound to that one client (never the
 * pool: a pooled query would escape the transaction). A client whose connection failed is
 * destroyed (`release(error)`), never returned to the pool.
 */
export class PostgresBackend extends SharedReads<NodePgDatabase, Tables> implements SqlBackend {
  readonly #pool: pg.Pool;
  readonly #owned: boolean;
  readonly #schema: string;
  readonly #location: string;
  readonly #bound = new WeakMap<pg.PoolClient, NodePgDatabase>();
  #appendQueries: AppendQueries | undefined;
  /** False once a pooler in transaction mode refused a named statement (see #autocommit). */
  #named = true;
  /** synchronous_commit as init's connection had it (an application's pool may turn it off). */
  #synchronousCommit = "unknown";

  constructor(options: { pool: pg.Pool; owned: boolean; schema?: string; location: string }) {
    super(drizzle({ client: options.pool }), postgresTables(options.schema ?? "public"));
    this.#pool = options.pool;
    this.#owned = options.owned;
    this.#schema = options.schema ?? "public";
    this.#location = options.location;
  }

  async init(options?: InitOptions): Promise<void> {
    // A transaction that waited on the migration lock may still see the catalog as it was
    // before it waited: an advisory lock, unlike a table lock, does not make the backend read
    // the catalog changes committed meanwhile. Two inits of a new schema at once on connections
    // that had run an init before failed the second with "duplicate key value violates unique
    // constraint pg_namespace_nspname_index" (CREATE SCHEMA IF NOT EXISTS trusting a stale
    // cache). A new transaction reads them, so the loser of that race runs once more and finds
    // the ledger made.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#initOnce(options);
      } catch (error) {
        const code = driverError(error).code;
        if (attempt === 3 || code === undefined || !catalogRaceCodes.has(code)) throw error;
      }
    }
  }

  async #initOnce(options?: InitOptions): Promise<void> {
    await this.#transaction(async (client) => {
      const schema = quoteIdent(this.#schema);
      // The application's pool may bound its queries (statement_timeout, lock_timeout): a
      // migration of a large schema is no such query, and a process starting meanwhile must
      // wait for it rather than fail. For this transaction only.
      await client.query("SET LOCAL statement_timeout = 0");
      await client.query("SET LOCAL lock_timeout = 0");
      // Only "on" (or a stricter remote_*) makes a commit durable against a server crash; an
      // application may turn it off for its own pool. Reported by describe(), as Redis does.
      const durability = await client.query<{ synchronous_commit: string }>(
        "SHOW synchronous_commit",
      );
      this.#synchronousCommit = durability.rows[0]?.synchronous_commit ?? "unknown";
      const found = await this.#ledgerVersion(client, schema);
      if (found === undefined && options?.create === false)
        throw noLedgerError(this.#location, `schema ${this.#schema} has no agent-ledger tables`);
      // A ledger at this version needs no lock and no DDL, so a role that may only read it (an
      // on-call person's credentials) opens it too. A newer one is refused here.
      if (found !== undefined && pendingMigrations("postgres", found).length === 0) return;
      // One migrator at a time per schema; the lock is released at COMMIT.
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
        `agent-ledger:migrate:${this.#schema}`,
      ]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      // The shipped SQL names tables without a schema: run it with the store's schema first.
      await client.query(`SET LOCAL search_path TO ${schema}`);
      // Read again under the lock: another process may have migrated meanwhile.
      const current = (await this.#ledgerVersion(client, schema)) ?? 0;
      for (const migration of pendingMigrations("postgres", current)) {
        for (const statement of migration.statements) await client.query(statement);
        await client.query(
          "INSERT INTO schema_version (version, tag, applied_at) VALUES ($1, $2, $3)",
          [migration.version, migration.tag, new Date().toISOString()],
        );
      }
    });
  }

  /** The schema's ledger version (its schema_version table's highest), undefined if none. */
  async #ledgerVersion(client: pg.PoolClient, schema: string): Promise<number | undefined> {
    const found = await client.query<{ name: string | null }>("SELECT to_regclass($1) AS name", [
      `${schema}.schema_version`,
    ]);
    if (!found.rows[0]?.name) return undefined;
    const result = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${schema}.schema_version`,
    );
    return Number(result.rows[0]?.version ?? 0);
  }

  async write<T>(program: () => WriteProgram<T>): Promise<T> {
    return this.#transaction((client) => {
      let db = this.#bound.get(client);
      if (db === undefined) {
        db = drizzle({ client });
        this.#bound.set(client, db);
      }
      const tx = db;
      return runAsync(program(), (step) => this.#execute(tx, step));
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
  async appendAtHead(append: HeadAppend): Promise<number | undefined> {
    const events = append.events;
    const single = events.length === 1 ? events[0] : undefined;
    // One event (every recorded call): scalar parameters, no arrays to serialise (the driver
    // escapes every element of a text array, and the body is JSON full of quotes) or unnest.
    const head = [
      append.sessionId,
      append.runId,
      append.length,
      append.status,
      append.lastHash,
      append.expected.length,
      append.expected.lastHash,
      append.now,
    ];
    const values: unknown[] =
      single !== undefined
        ? [
            ...head,
            single.seq,
            single.eventId,
            single.eventType,
            single.recordedAt,
            single.bodyPrefix,
          ]
        : [
            ...head,
            events.length,
            events.map((event) => event.seq),
            events.map((event) => event.eventId),
            events.map((event) => event.eventType),
            events.map((event) => event.recordedAt),
            events.map((event) => event.bodyPrefix),
          ];
    const queries = this.#appendAtHeadQueries;
    const shape = single !== undefined ? queries.single : queries.batch;
    let query = shape.plain;
    if (append.refs.length > 0) {
      values.push(append.refs);
      query = shape.refs;
    }
    if (append.blobs.length > 0) {
      // Past one statement's bytes the transactional program stores them in chunks.
      let bytes = 0;
      for (const blob of append.blobs) bytes += blob.stored.byteLength;
      if (bytes > BLOB_BYTES_PER_STATEMENT) return undefined;
      values.push(
        append.blobs.map((blob) => blob.ref),
        append.blobs.map((blob) => bufferOf(blob.stored)),
      );
      query = shape.blobs;
    }
    const result = await this.#autocommit<{ last_cursor: string | number }>(query, values);
    const row = result.rows[0];
    return row === undefined ? undefined : Number(row.last_cursor);
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
    const order = inLockOrder(appends);
    const column = <V>(pick: (append: HeadAppend) => V) => order.map(({ append }) => pick(append));
    /** `pick`'s items of every append, each with the append's place in the arrays (from 1). */
    const owned = <V>(pick: (append: HeadAppend) => V[]) =>
      order.flatMap(({ append }, place) =>
        pick(append).map((item) => ({ item, owner: place + 1 })),
      );
    const events = order.flatMap(({ append }) => append.events);
    const refs = owned((append) => append.refs);
    const blobs = owned((append) => append.blobs);
    const values: unknown[] = [
      appends[0]?.sessionId,
      column((append) => append.runId),
      column((append) => append.length),
      column((append) => append.status),
      column((append) => append.lastHash),
      column((append) => append.expected.length),
      column((append) => append.expected.lastHash),
      column((append) => append.events.length),
      appends[0]?.now,
      events.map((event) => event.seq),
      events.map((event) => event.eventId),
      events.map((event) => event.eventType),
      events.map((event) => event.recordedAt),
      events.map((event) => event.bodyPrefix),
    ];
    let query = this.#appendAtHeadQueries.runs;
    if (refs.length > 0 || blobs.length > 0) {
      values.push(
        refs.map(({ item }) => item),
        refs.map(({ owner }) => owner),
        blobs.map(({ item }) => item.ref),
        blobs.map(({ item }) => bufferOf(item.stored)),
        blobs.map(({ owner }) => owner),
      );
      query = this.#appendAtHeadQueries.runsBlobs;
    }
    const result = await this.#autocommit<{ ord: number; last_cursor: string | number }>(
      query,
      values,
    );
    const lasts: (number | undefined)[] = appends.map(() => undefined);
    for (const row of result.rows) {
      const entry = order[row.ord - 1];
      if (entry !== undefined) lasts[entry.index] = Number(row.last_cursor);
    }
    return lasts;
  }

  /**
   * `h` also requires the session's counter row: were a runs row ever without it, `c` would
   * update nothing and `e` insert nothing, and `h` alone must not move the head. Then the
   * statement writes nothing and the store falls back on the transactional program.
   */
  get #appendAtHeadQueries(): AppendQueries {
    if (this.#appendQueries !== undefined) return this.#appendQueries;
    const schema = quoteIdent(this.#schema);
    const head = `h AS (
  UPDATE ${schema}."runs" SET run_length = $3, status = $4, last_hash = $5
  WHERE session_id = $1 AND run_id = $2 AND run_length = $6
    AND last_hash IS NOT DISTINCT FROM $7::text AND status = 'running'
    AND EXISTS (SELECT 1 FROM ${schema}."sessions" s WHERE s.session_id = $1)
  RETURNING 1
)`;
    const cursor = (count: string) => `c AS (
  UPDATE ${schema}."sessions" SET last_cursor = last_cursor + ${count}, updated_at = $8
  WHERE session_id = $1 AND EXISTS (SELECT 1 FROM h)
  RETURNING last_cursor
)`;
    const columns =
      "(session_id, commit_cursor, run_id, seq, event_id, event_type, recorded_at, body)";
    const single = `WITH ${head}, ${cursor("1")}, e AS (
  INSERT INTO ${schema}."events" ${columns}
  SELECT $1, c.last_cursor, $2, $9::int, $10::text, $11::text, $12::text,
    $13::text || c.last_cursor::text || '}'
  FROM c
)
`;
    const batch = `WITH ${head}, ${cursor("$9::bigint")}, e AS (
  INSERT INTO ${schema}."events" ${columns}
  SELECT $1, c.last_cursor - $9::bigint + u.ord, $2, u.seq, u.event_id, u.event_type,
    u.recorded_at, u.prefix || (c.last_cursor - $9::bigint + u.ord)::text || '}'
  FROM c, unnest($10::int[], $11::text[], $12::text[], $13::text[], $14::text[])
    WITH ORDINALITY AS u(seq, event_id, event_type, recorded_at, prefix, ord)
)`;
    // The blobs' index rows, written only when `c` moved the counter, after the counter row
    // (the transactional path's order); refs sorted, so two writers insert them in one order.
    const indexRefs = (parameter: string) => `, r AS (
  INSERT INTO ${schema}."blob_refs" (blob_ref, session_id)
  SELECT x.ref, $1 FROM c, unnest(${parameter}::text[]) AS x(ref)
  ON CONFLICT DO NOTHING
)`;
    // The blobs the append carries, stored only when `c` moved the counter (after the
    // counter row, as deleteSession locks it before the blobs it collects), then claimed by
    // `r` in the same commit.
    const storeBlobs = (refs: string, contents: string) => `, b AS (
  INSERT INTO ${schema}."blobs" (blob_ref, content, touched_at)
  SELECT x.ref, x.content, ${SERVER_EPOCH_MS}
  FROM c, unnest(${refs}::text[], ${contents}::bytea[]) AS x(ref, content)
  ON CONFLICT (blob_ref) DO UPDATE SET touched_at = excluded.touched_at
)`;
    const last = "\nSELECT last_cursor FROM c";
    const named = (text: string) => ({
      name: `agent_ledger_append_${createHash("sha256").update(text).digest("hex").slice(0, 16)}`,
      text,
    });
    const runArguments = `$1::text, $2::text[], $3::int[], $4::text[], $5::text[], $6::int[],
  $7::text[], $8::int[], $9::text, $10::int[], $11::text[], $12::text[], $13::text[], $14::text[]`;
    const runs = `SELECT ord, last_cursor FROM ${schema}.agent_ledger_append_at_heads(
  ${runArguments})`;
    const runsBlobs = `SELECT ord, last_cursor FROM ${schema}.agent_ledger_append_blobs_at_heads(
  ${runArguments}, $15::text[], $16::int[], $17::text[], $18::bytea[], $19::int[])`;
    this.#appendQueries = {
      single: {
        plain: named(single + last),
        refs: named(single + indexRefs("$14") + last),
        blobs: named(single + storeBlobs("$15", "$16") + indexRefs("$14") + last),
      },
      batch: {
        plain: named(batch + last),
        refs: named(batch + indexRefs("$15") + last),
        blobs: named(batch + storeBlobs("$16", "$17") + indexRefs("$15") + last),
      },
      runs: named(runs),
      runsBlobs: named(runsBlobs),
    };
    return this.#appendQueries;
  }

  /**
   * One statement on a pooled client; a client whose connection failed is destroyed. The
   * statement goes by its name (parsed and planned once per connection) until the server
   * answers that the name is unknown or already taken on the connection it reached: a pooler
   * in transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`) hands
   * each transaction to any of its server connections, while node-postgres remembers what it
   * prepared per client. From then on this store sends its statements unnamed, and the one
   * refused is sent again so: the server executed nothing of it.
   */
  async #autocommit<R extends pg.QueryResultRow>(
    query: NamedQuery,
    values: unknown[],
  ): Promise<pg.QueryResult<R>> {
    const client = await this.#pool.connect();
    const onError = () => {};
    client.on("error", onError);
    let broken: Error | undefined;
    try {
      if (!this.#named) return await client.query<R>({ text: query.text, values });
      try {
        return await client.query<R>({ ...query, values });
      } catch (error) {
        if (!statementNameErrors.has(driverError(error).code ?? "")) throw error;
        this.#named = false;
        return await client.query<R>({ text: query.text, values });
      }
    } catch (error) {
      const code = driverError(error).code;
      if (code === undefined || !statementErrors.test(code))
        broken = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  async #transaction<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    // A connection dropped while checked out emits 'error' on the client: the pending query
    // rejects with it too, so this listener only keeps the process from crashing.
    const onError = () => {};
    client.on("error", onError);
    let broken: Error | undefined;
    try {
      // The program's locks (FOR UPDATE on the run head, the session counter's upsert) are
      // made for READ COMMITTED, where a writer that waited on a lock reads the row its
      // predecessor committed. Set here, not left to the connection: an application may make
      // its pool's transactions REPEATABLE READ or SERIALIZABLE (default_transaction_isolation),
      // and there every writer that waited fails with a serialization error instead.
      await client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
      const result = await body(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      const code = driverError(error).code;
      // A ledger error from the program, or a failed statement: the connection is fine.
      if (LedgerError.isInstance(error) || (code !== undefined && statementErrors.test(code))) {
        await client.query("ROLLBACK").catch((rollbackError: Error) => {
          broken = rollbackError;
        });
      } else {
        broken = error instanceof Error ? error : new Error(String(error));
      }
      throw error;
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  async #execute(tx: NodePgDatabase, step: WriteStep): Promise<unknown> {
    const shared = sharedStep(tx as unknown as QueryDb, this.tables, step);
    if (shared !== undefined) return shared;
    const { events, runs, sessions, blobs, blobRefs } = this.tables;
    switch (step.kind) {
      case "put-blobs":
        for (const values of blobValues(step.blobs, BLOB_BYTES_PER_STATEMENT, serverEpochMs))
          await tx.execute(this.#putStatement(values, true, undefined));
        return undefined;
      case "index-refs":
        for (const refs of chunked(step.refs))
          await tx
            .insert(blobRefs)
            .values(refs.map((blobRef) => ({ blobRef, sessionId: step.sessionId })))
            .onConflictDoNothing();
        return undefined;
      case "collect-session-blobs": {
        // One statement: the session's refs, read and counted on the server, and the blobs
        // among them that no other session names (the session's own index rows go with its
        // other rows, in delete-session).
        // The rows are locked in ref order first, as appends and puts upsert them (see
        // #collectBlobs).
        const result = await tx.execute<{ refs: string; deleted: string }>(sql`WITH mine AS (
  SELECT blob_ref FROM ${blobRefs} WHERE session_id = ${step.sessionId}
), doomed AS (
  SELECT ${blobs.blobRef} AS blob_ref FROM ${blobs}
  WHERE ${blobs.blobRef} IN (SELECT blob_ref FROM mine)
    AND ${blobs.touchedAt} <= ${serverEpochMs} - ${step.graceMs}
    AND NOT EXISTS (SELECT 1 FROM ${blobRefs} r
      WHERE r.blob_ref = ${blobs.blobRef} AND r.session_id <> ${step.sessionId})
  ORDER BY ${blobs.blobRef} FOR UPDATE
), gone AS (
  DELETE FROM ${blobs} WHERE ${blobs.blobRef} IN (SELECT blob_ref FROM doomed)
  RETURNING 1
)
SELECT (SELECT count(*) FROM mine) AS refs, (SELECT count(*) FROM gone) AS deleted`);
        const row = result.rows[0];
        return { refs: Number(row?.refs ?? 0), deleted: Number(row?.deleted ?? 0) };
      }
      case "collect-blobs":
        return this.#collectBlobs(tx, step);
      case "delete-session": {
        // Counted by the server (rowCount), not returned row by row.
        const deletedEvents = await tx.delete(events).where(eq(events.sessionId, step.sessionId));
        const deletedRuns = await tx.delete(runs).where(eq(runs.sessionId, step.sessionId));
        await tx.delete(blobRefs).where(eq(blobRefs.sessionId, step.sessionId));
        await tx.delete(sessions).where(eq(sessions.sessionId, step.sessionId));
        return { events: deletedEvents.rowCount ?? 0, runs: deletedRuns.rowCount ?? 0 };
      }
      case "reserve-cursors": {
        const rows = await tx
          .insert(sessions)
          .values({
            sessionId: step.sessionId,
            lastCursor: step.count,
            createdAt: step.now,
            updatedAt: step.now,
          })
          .onConflictDoUpdate({
            target: sessions.sessionId,
            set: {
              lastCursor: sql`${sessions.lastCursor} + ${step.count}`,
              updatedAt: step.now,
            },
          })
          .returning({ lastCursor: sessions.lastCursor });
        return Number(rows[0]?.lastCursor);
      }
      default:
        throw new Error(`no query for the write step ${step.kind}`);
    }
  }

  /**
   * A page of collectBlobs in one statement: `page` reads the next `limit` keys (the primary
   * key, in order), `doomed` locks those past the grace that no existing session references,
   * in key order, `gone` deletes them, `refs` their index rows, and only counts and the last
   * key come back.
   *
   * Why the locks come first, in key order: an append or a put that stores blobs upserts
   * their rows in ref order (blobRows sorts them), each row locked until its commit. A DELETE
   * takes the rows in whatever order its plan visits them (a hash join over the table visits
   * them as they lie in it), so it could hold a later blob's row and wait for an earlier one
   * that an append holds while the append waits for the later: a deadlock, which PostgreSQL
   * finds only after deadlock_timeout (1 s by default) and ends by rolling one back (the store
   * runs it again). A locking SELECT sorts before it locks (its LockRows node sits above the
   * Sort), so both sides queue in one order and one simply waits for the other; the DELETE
   * then finds every row it deletes already locked. deleteSession's collect-session-blobs does
   * the same. (collect-lock-order.int.test.ts makes the interleaving happen.)
   *
   * Why READ COMMITTED suffices: the statement reads one snapshot, and the locking read checks
   * each row it locks again in its newest committed version (EvalPlanQual). A put
   * that committed before the snapshot left a touched_at within the grace; one that commits
   * while the rows are locked holds the row until then, after which the lock sees its
   * touched_at and keeps the blob; one that comes after the DELETE's commit finds no row and
   * inserts the blob again (ON CONFLICT sees no conflict with a deleted row). An append's
   * index row and session row committed before the snapshot are seen by NOT EXISTS; one
   * committing later belongs to a writer that stores its blobs with that append, or put them
   * within the grace period right before it. Data-modifying CTEs share that snapshot, so
   * `refs` deletes the index rows `gone` judged, all of sessions gone in it, and never one
   * inserted since.
   */
  async #collectBlobs(
    tx: NodePgDatabase,
    step: Extract<WriteStep, { kind: "collect-blobs" }>,
  ): Promise<BlobPage> {
    const { blobs, blobRefs, sessions } = this.tables;
    const after = step.after === undefined ? sql`true` : sql`${blobs.blobRef} > ${step.after}`;
    const result = await tx.execute<{ examined: string; last: string | null; deleted: string }>(
      sql`WITH page AS (
  SELECT ${blobs.blobRef} AS blob_ref FROM ${blobs} WHERE ${after}
  ORDER BY ${blobs.blobRef} LIMIT ${step.limit}
), doomed AS (
  SELECT ${blobs.blobRef} AS blob_ref FROM ${blobs}
  WHERE ${blobs.blobRef} IN (SELECT blob_ref FROM page)
    AND ${blobs.touchedAt} <= ${serverEpochMs} - ${step.graceMs}
    AND NOT EXISTS (SELECT 1 FROM ${blobRefs} r WHERE r.blob_ref = ${blobs.blobRef}
      AND EXISTS (SELECT 1 FROM ${sessions} s WHERE s.session_id = r.session_id))
  ORDER BY ${blobs.blobRef} FOR UPDATE
), gone AS (
  DELETE FROM ${blobs} WHERE ${blobs.blobRef} IN (SELECT blob_ref FROM doomed)
  RETURNING ${blobs.blobRef} AS blob_ref
), refs AS (
  DELETE FROM ${blobRefs} WHERE ${blobRefs.blobRef} IN (SELECT blob_ref FROM gone)
)
SELECT (SELECT count(*) FROM page) AS examined, (SELECT max(blob_ref) FROM page) AS last,
  (SELECT count(*) FROM gone) AS deleted`,
    );
    const row = result.rows[0];
    return {
      examined: Number(row?.examined ?? 0),
      last: row?.last ?? undefined,
      deleted: Number(row?.deleted ?? 0),
    };
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

  async listSessions(after: string | undefined, limit: number | undefined): Promise<SessionRow[]> {
    const { sessions } = this.tables;
    // Code-point order whatever the database's collation, like SQLite and MySQL's VARBINARY.
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
  async putBlobs(rows: BlobRow[], durable: boolean, sessionId: string | undefined): Promise<void> {
    const chunks = blobValues(rows, BLOB_BYTES_PER_STATEMENT, serverEpochMs);
    if (chunks.length === 1) {
      await this.db.execute(this.#putStatement(chunks[0] ?? [], durable, sessionId));
      return;
    }
    // The setting made by the first statement holds until the transaction's commit.
    await this.db.transaction(async (tx) => {
      for (const [index, values] of chunks.entries())
        await tx.execute(this.#putStatement(values, durable || index > 0, sessionId));
    });
  }

  /** One chunk's blobs and claims in one statement; `durable` false: an asynchronous commit. */
  #putStatement(
    values: ReturnType<typeof blobValues>[number],
    durable: boolean,
    sessionId: string | undefined,
  ): SQL {
    const { blobs, blobRefs } = this.tables;
    const parts: SQL[] = [];
    if (!durable) parts.push(sql`a AS (SELECT set_config('synchronous_commit', 'off', true))`);
    const blobRows = values.map((row) => sql`(${row.blobRef}, ${row.content}, ${row.touchedAt})`);
    parts.push(sql`b AS (INSERT INTO ${blobs} (blob_ref, content, touched_at)
  VALUES ${sql.join(blobRows, sql`, `)}
  ON CONFLICT (blob_ref) DO UPDATE SET touched_at = excluded.touched_at)`);
    if (sessionId !== undefined) {
      const claims = values.map((row) => sql`(${row.blobRef}, ${sessionId})`);
      parts.push(sql`r AS (INSERT INTO ${blobRefs} (blob_ref, session_id)
  VALUES ${sql.join(claims, sql`, `)} ON CONFLICT DO NOTHING)`);
    }
    return sql`WITH ${sql.join(parts, sql`, `)} SELECT ${durable ? sql`1` : sql`(SELECT 1 FROM a)`}`;
  }

  describe(): StoreDescription {
    return {
      kind: "postgres",
      location: this.#location,
      durability: {
        schema: this.#schema,
        synchronous_commit: this.#synchronousCommit,
        note: "an acknowledged append survives a server crash only with synchronous_commit on",
      },
    };
  }

  async close(): Promise<void> {
    if (this.#owned) await this.#pool.end();
  }
}
