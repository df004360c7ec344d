import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, type MockInstance, vi } from "vitest";
import type { LedgerEvent } from "../../../events/types.js";
import type { AppendRequest, EventStore } from "../../../store/event-store.js";
import { freshPlaces } from "../../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../../testing/servers.js";
import { MysqlBackend } from "../../mysql/mysql-backend.js";
import { MysqlEventStore } from "../../mysql/mysql-store.js";
import { PostgresBackend } from "../../postgres/postgres-backend.js";
import { PostgresEventStore } from "../../postgres/postgres-store.js";
import type { HeadAppend } from "../head-cache.js";

/**
 * The PostgreSQL and MariaDB stores the append-at-head tests run on, each on a fresh database,
 * and the steps those tests share (append-at-head.int.test.ts, append-at-head-blobs.int.test.ts).
 */

/** A fresh database of a kind, and what the tests do on it. */
export interface FreshStores {
  /** The database's name (a schema's, on PostgreSQL). */
  name: string;
  /** A new store on the database, initialized. */
  open(): Promise<EventStore>;
  /** Deletes a session's counter row (a damaged store). */
  deleteSessionRow(sessionId: string): Promise<void>;
}

export interface Kind {
  name: string;
  available: boolean;
  /** A fresh database, on which each `open()` makes another store. */
  database(): Promise<FreshStores>;
  /** The backend class, whose `appendAtHeads` the tests watch to see which appends went together. */
  backend: {
    prototype: {
      appendAtHeads(appends: HeadAppend[]): Promise<unknown>;
      write(program: () => unknown): Promise<unknown>;
      putBlobs(...args: never[]): Promise<void>;
    };
  };
  /** Whether one statement carries appends of several sessions (`batchesAcrossSessions`). */
  acrossSessions: boolean;
}

const available = {
  postgres: await serverAvailable("postgres"),
  mysql: await serverAvailable("mysql"),
};

/**
 * The kinds as one test file uses them: the databases they make and the stores they open are the
 * file's own, in `cleanups` (run after its tests: each close is put first, the databases dropped
 * last). Made by each file's `describeEachKind`: the files that use this module share one copy of
 * it when they run in one worker (the core project's files share their workers' modules).
 */
function kindsFor(cleanups: (() => Promise<void>)[]): Kind[] {
  const places = freshPlaces((drop) => cleanups.push(drop));
  return [
    {
      name: "PostgresEventStore",
      available: available.postgres,
      backend: PostgresBackend,
      acrossSessions: false,
      async database() {
        const schema = places.schema("head");
        return {
          name: schema,
          async open() {
            const store = new PostgresEventStore({
              connectionString: SERVER_URLS.postgres,
              schema,
            });
            await store.init();
            cleanups.unshift(() => store.close());
            return store;
          },
          async deleteSessionRow(sessionId) {
            const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
            await client.connect();
            await client.query(`DELETE FROM "${schema}".sessions WHERE session_id = $1`, [
              sessionId,
            ]);
            await client.end();
          },
        };
      },
    },
    {
      name: "MysqlEventStore",
      available: available.mysql,
      backend: MysqlBackend,
      acrossSessions: true,
      async database() {
        const { database } = await places.database("head").create();
        return {
          name: database,
          async open() {
            // An application pool with the ledger in another database: the qualified names.
            const pool = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 4 });
            const store = new MysqlEventStore({ pool, database });
            await store.init();
            cleanups.unshift(async () => {
              await store.close();
              await pool.end();
            });
            return store;
          },
          async deleteSessionRow(sessionId) {
            const admin = await mysql.createConnection(SERVER_URLS.mysql);
            await admin.query(`DELETE FROM \`${database}\`.sessions WHERE session_id = ?`, [
              sessionId,
            ]);
            await admin.end();
          },
        };
      },
    },
  ];
}

/**
 * The file's tests, in a `describe` per kind ("<name> append at a cached head", skipped where its
 * server is not up); after them, the stores they opened are closed and their databases dropped.
 */
export function describeEachKind(tests: (kind: Kind) => void): void {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups) await cleanup();
  });
  for (const kind of kindsFor(cleanups)) {
    describe.skipIf(!kind.available)(`${kind.name} append at a cached head`, () => tests(kind));
  }
}

export const event = (type: string, payload: unknown = null) => ({ type, payload }) as never;

/** Starts each run with one event, one after the other; returns the events written. */
export async function startRuns(
  store: EventStore,
  runs: { sessionId: string; runId: string }[],
): Promise<LedgerEvent[]> {
  const written: LedgerEvent[] = [];
  for (const run of runs) {
    const started = await store.append({ ...run, expectedSeq: 0, events: [event("run.started")] });
    written.push(...started.events);
  }
  return written;
}

/** The address of each of `runs` in one session. */
export const runsOf = (sessionId: string, runs: string[]) =>
  runs.map((runId) => ({ sessionId, runId }));

/** Closes each of `runs` where it stands, then deletes the session at grace 0. */
export async function closeAndDelete(store: EventStore, sessionId: string, runs: string[]) {
  for (const runId of runs) {
    const head = await store.runHead({ sessionId, runId });
    await store.append({
      sessionId,
      runId,
      expectedSeq: head.length,
      events: [event("run.completed")],
    });
  }
  return store.deleteSession(sessionId, { blobGraceMs: 0 });
}

/**
 * Sends every request to `store` in one tick, so that the store may gather them, and answers
 * each with its result or its error; the events written are added to `written`.
 */
export function appendAtOnce(
  store: EventStore,
  requests: AppendRequest[],
  written: LedgerEvent[],
): Promise<unknown[]> {
  return Promise.all(
    requests.map((request) =>
      store.append(request).then(
        (result) => {
          written.push(...result.events);
          return result;
        },
        (error: unknown) => error,
      ),
    ),
  );
}

/** Every append `batches` was called with, statement after statement. */
export function sentIn(batches: { mock: { calls: [HeadAppend[]][] } }): HeadAppend[] {
  return batches.mock.calls.flatMap(([appends]) => appends);
}

/** Whether some statement of `batches` gathered several appends, one of them `matching`. */
export function gatheredWith(
  batches: { mock: { calls: [HeadAppend[]][] } },
  matching: (append: HeadAppend) => boolean,
): boolean {
  return batches.mock.calls.some(([appends]) => appends.length > 1 && appends.some(matching));
}

/**
 * Runs `body` with two stores on a fresh database (named by `body`'s last argument) and the
 * backend's `appendAtHeads` watched (before the stores are made: a store binds the method when
 * constructed), then stops watching.
 */
export async function twoStoresWatched(
  kind: Kind,
  body: (
    a: EventStore,
    b: EventStore,
    batches: MockInstance<(appends: HeadAppend[]) => Promise<unknown>>,
    database: string,
  ) => Promise<void>,
): Promise<void> {
  const { name, open } = await kind.database();
  const batches = vi.spyOn(kind.backend.prototype, "appendAtHeads");
  try {
    await body(await open(), await open(), batches, name);
  } finally {
    batches.mockRestore();
  }
}
