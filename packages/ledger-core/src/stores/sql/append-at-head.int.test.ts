import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, expect, it, type MockInstance, vi } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { type ConflictError, LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import type { LedgerEvent } from "../../events/types.js";
import type { AppendRequest, EventStore } from "../../store/event-store.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { MysqlBackend } from "../mysql/mysql-backend.js";
import { MysqlEventStore } from "../mysql/mysql-store.js";
import { PostgresBackend } from "../postgres/postgres-backend.js";
import { PostgresEventStore } from "../postgres/postgres-store.js";
import type { HeadAppend } from "./head-cache.js";
import {
  checkSession,
  checkSharedBlobWriters,
  sixteenWriters,
} from "./testing/shared-blob-writers.js";

// The one-round-trip append a SQL store uses when a writer continues the run where the store's
// own last append left it (a cached head). Several store instances on one database stand for
// several processes: each one's cache goes stale when another writes.

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

interface Kind {
  name: string;
  available: boolean;
  /** A factory of stores sharing one fresh database. */
  database(): Promise<() => Promise<EventStore>>;
  /** Deletes a session's counter row in the database `database()` made last (a damaged store). */
  deleteSessionRow(sessionId: string): Promise<void>;
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

let lastDatabase = "";

const kinds: Kind[] = [
  {
    name: "PostgresEventStore",
    available: await serverAvailable("postgres"),
    backend: PostgresBackend,
    acrossSessions: false,
    async database() {
      const schema = `ledger_head_${uuidv7().replaceAll("-", "")}`;
      lastDatabase = schema;
      cleanups.push(async () => {
        const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      });
      return async () => {
        const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
        await store.init();
        cleanups.unshift(() => store.close());
        return store;
      };
    },
    async deleteSessionRow(sessionId) {
      const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
      await client.connect();
      await client.query(`DELETE FROM "${lastDatabase}".sessions WHERE session_id = $1`, [
        sessionId,
      ]);
      await client.end();
    },
  },
  {
    name: "MysqlEventStore",
    available: await serverAvailable("mysql"),
    backend: MysqlBackend,
    acrossSessions: true,
    async database() {
      const database = `ledger_head_${uuidv7().replaceAll("-", "")}`;
      lastDatabase = database;
      const admin = await mysql.createConnection(SERVER_URLS.mysql);
      await admin.query(`CREATE DATABASE \`${database}\``);
      cleanups.push(async () => {
        await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
        await admin.end();
      });
      return async () => {
        // An application pool with the ledger in another database: the qualified names.
        const pool = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 4 });
        const store = new MysqlEventStore({ pool, database });
        await store.init();
        cleanups.unshift(async () => {
          await store.close();
          await pool.end();
        });
        return store;
      };
    },
    async deleteSessionRow(sessionId) {
      const admin = await mysql.createConnection(SERVER_URLS.mysql);
      await admin.query(`DELETE FROM \`${lastDatabase}\`.sessions WHERE session_id = ?`, [
        sessionId,
      ]);
      await admin.end();
    },
  },
];

const event = (type: string, payload: unknown = null) => ({ type, payload }) as never;

/** Starts each run with one event, one after the other; returns the events written. */
async function startRuns(
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
const runsOf = (sessionId: string, runs: string[]) => runs.map((runId) => ({ sessionId, runId }));

/** Closes each of `runs` where it stands, then deletes the session at grace 0. */
async function closeAndDelete(store: EventStore, sessionId: string, runs: string[]) {
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
function appendAtOnce(
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
function sentIn(batches: { mock: { calls: [HeadAppend[]][] } }): HeadAppend[] {
  return batches.mock.calls.flatMap(([appends]) => appends);
}

/** Whether some statement of `batches` gathered several appends, one of them `matching`. */
function gatheredWith(
  batches: { mock: { calls: [HeadAppend[]][] } },
  matching: (append: HeadAppend) => boolean,
): boolean {
  return batches.mock.calls.some(([appends]) => appends.length > 1 && appends.some(matching));
}

/**
 * Runs `body` with two stores on a fresh database and the backend's `appendAtHeads` watched
 * (before the stores are made: a store binds the method when constructed), then stops watching.
 */
async function twoStoresWatched(
  kind: Kind,
  body: (
    a: EventStore,
    b: EventStore,
    batches: MockInstance<(appends: HeadAppend[]) => Promise<unknown>>,
  ) => Promise<void>,
): Promise<void> {
  const open = await kind.database();
  const batches = vi.spyOn(kind.backend.prototype, "appendAtHeads");
  try {
    await body(await open(), await open(), batches);
  } finally {
    batches.mockRestore();
  }
}

for (const kind of kinds) {
  describe.skipIf(!kind.available)(`${kind.name} append at a cached head`, () => {
    it("two stores writing one run alternately: each stale cache falls back, the chain is right", async () => {
      const open = await kind.database();
      const [a, b] = [await open(), await open()];
      const sessionId = `alt-${uuidv7()}`;
      const written: LedgerEvent[] = [];
      const first = await a.append({
        sessionId,
        runId: "r",
        expectedSeq: 0,
        events: [event("run.started")],
      });
      written.push(...first.events);
      for (let index = 1; index < 13; index++) {
        // Two appends in a row by one store (its cache is right), then the other store's turn.
        const writer = Math.floor(index / 2) % 2 === 0 ? a : b;
        const result = await writer.append({
          sessionId,
          runId: "r",
          expectedSeq: index,
          events: [event("x.step", index)],
        });
        expect(result.deduplicated).toBe(false);
        expect(result.events[0]?.seq).toBe(index);
        written.push(...result.events);
      }
      // A's cache says 12 (its last append), the run is at 13: a stale expectedSeq conflicts.
      const stale = await a
        .append({ sessionId, runId: "r", expectedSeq: 12, events: [event("x.late")] })
        .catch((error: unknown) => error);
      expect(LedgerError.isInstance(stale, "conflict")).toBe(true);
      expect((stale as ConflictError).actualSeq).toBe(13);
      await checkSession(a, sessionId, written);
    });

    it("a retry after an unknown outcome dedups, an id of another run is duplicate-event", async () => {
      const open = await kind.database();
      const [a, b] = [await open(), await open()];
      const sessionId = `retry-${uuidv7()}`;
      await a.append({ sessionId, runId: "r", expectedSeq: 0, events: [event("run.started")] });
      await a.append({ sessionId, runId: "r", expectedSeq: 1, events: [event("x.one")] });
      // The batch was committed (here by B, as if A's connection died after the commit), A's
      // cached head still says 2: its retry finds the head moved and dedups.
      const batch = {
        sessionId,
        runId: "r",
        expectedSeq: 2,
        events: [
          { eventId: `e-${uuidv7()}`, type: "model.requested", payload: { n: 1 } },
          { eventId: `e-${uuidv7()}`, type: "model.completed", payload: { n: 2 } },
        ],
      } as const;
      const committed = await b.append(batch as never);
      const retried = await a.append(batch as never);
      expect(retried.deduplicated).toBe(true);
      expect(retried.events).toEqual(committed.events);
      // A is at the head again (its cache was dropped): the fast path writes the next batch.
      const next = await a.append({
        sessionId,
        runId: "r",
        expectedSeq: 4,
        events: [event("x.next")],
      });
      expect(next.events[0]?.commitCursor).toBe(5);
      // An id stored in another run of the session fails the one statement on the unique index;
      // the full check names it.
      await a.append({ sessionId, runId: "s", expectedSeq: 0, events: [event("run.started")] });
      const clash = await a
        .append({
          sessionId,
          runId: "r",
          expectedSeq: 5,
          events: [{ eventId: batch.events[0].eventId, type: "x.clash", payload: null } as never],
        })
        .catch((error: unknown) => error);
      expect(LedgerError.isInstance(clash, "duplicate-event")).toBe(true);
      expect((await a.runHead({ sessionId, runId: "r" })).length).toBe(5);
      await checkSession(a, sessionId, [...committed.events, ...next.events]);
    });

    it("a run closed by another store is run-closed, not written", async () => {
      const open = await kind.database();
      const [a, b] = [await open(), await open()];
      const sessionId = `closed-${uuidv7()}`;
      await a.append({ sessionId, runId: "r", expectedSeq: 0, events: [event("run.started")] });
      await b.append({ sessionId, runId: "r", expectedSeq: 1, events: [event("run.completed")] });
      const error = await a
        .append({ sessionId, runId: "r", expectedSeq: 1, events: [event("x.after")] })
        .catch((failure: unknown) => failure);
      // The head moved (length 2): conflict is checked after the closed status.
      expect(LedgerError.isInstance(error, "run-closed")).toBe(true);
      expect((await a.runHead({ sessionId, runId: "r" })).length).toBe(2);
    });

    it("a runs row without its session row: the one statement never moves the head alone", async () => {
      const open = await kind.database();
      const store = await open();
      const sessionId = `orphan-${uuidv7()}`;
      await store.append({ sessionId, runId: "r", expectedSeq: 0, events: [event("run.started")] });
      await store.append({ sessionId, runId: "r", expectedSeq: 1, events: [event("x.one")] });
      await kind.deleteSessionRow(sessionId);
      // The store's cached head is right (2), so the one-statement path is tried first. The
      // outcome of the fallback on a damaged store does not matter here: what must hold is that
      // the head never counts an event that was not stored.
      await store
        .append({ sessionId, runId: "r", expectedSeq: 2, events: [event("x.two")] })
        .catch(() => undefined);
      const head = await store.runHead({ sessionId, runId: "r" });
      const stored = await store.readRun({ sessionId, runId: "r" });
      expect(head.length).toBe(stored.events.length);
      expect(head.lastHash).toBe(stored.events[stored.events.length - 1]?.hash);
    });

    it("cursors stay gap-free and in commit order with concurrent writers on one session", async () => {
      const open = await kind.database();
      const stores = [await open(), await open(), await open()];
      const sessionId = `order-${uuidv7()}`;
      const written: LedgerEvent[] = [];
      await Promise.all(
        Array.from({ length: 6 }, async (_, writer) => {
          const store = stores[writer % stores.length] as EventStore;
          const runId = `run-${writer}`;
          let length = 0;
          for (let index = 0; index < 15; index++) {
            const batch = [event(index === 0 ? "run.started" : "x.step", index), event("x.more")];
            const result = await store.append({
              sessionId,
              runId,
              expectedSeq: length,
              events: batch.slice(0, index % 3 === 0 ? 1 : 2),
            });
            length += result.events.length;
            written.push(...result.events);
          }
        }),
      );
      await checkSession(stores[0] as EventStore, sessionId, written);
      expect(written.map((mine) => mine.commitCursor).sort((x, y) => x - y)).toEqual(
        Array.from({ length: written.length }, (_, index) => index + 1),
      );
    });

    it("one store gathers concurrent appends of a session into one statement, each answered as alone", async () => {
      const open = await kind.database();
      const spy = vi.spyOn(kind.backend.prototype, "appendAtHeads");
      try {
        const store = await open();
        // Eight runs over two sessions, each a writer appending as fast as it is answered.
        const writers = Array.from({ length: 8 }, (_, writer) => ({
          sessionId: `group-${writer % 2}-${lastDatabase}`,
          runId: `run-${writer}`,
          length: 0,
        }));
        const written: LedgerEvent[] = [];
        for (const writer of writers) {
          const result = await store.append({
            sessionId: writer.sessionId,
            runId: writer.runId,
            expectedSeq: 0,
            events: [event("run.started")],
          });
          writer.length = 1;
          written.push(...result.events);
        }
        await Promise.all(
          writers.map(async (writer, index) => {
            for (let step = 0; step < 12; step++) {
              // Batches of one to three events, so statements carry appends of several sizes.
              const count = 1 + ((index + step) % 3);
              const result = await store.append({
                sessionId: writer.sessionId,
                runId: writer.runId,
                expectedSeq: writer.length,
                events: Array.from({ length: count }, (_, k) => event("x.step", [step, k])),
              });
              expect(result.deduplicated).toBe(false);
              expect(result.events.map((stored) => stored.seq)).toEqual(
                Array.from({ length: count }, (_, k) => writer.length + k),
              );
              writer.length += count;
              written.push(...result.events);
            }
          }),
        );
        const batched = spy.mock.calls.filter(([appends]) => appends.length > 1);
        expect(batched.length).toBeGreaterThan(0);
        const sessionsPerStatement = spy.mock.calls.map(
          ([appends]) => new Set(appends.map((append) => append.sessionId)).size,
        );
        // PostgreSQL gathers per session (sessions never wait for each other); MariaDB gathers
        // the whole store's appends, one counter bump per session in the statement.
        if (kind.acrossSessions) expect(Math.max(...sessionsPerStatement)).toBe(2);
        else expect(Math.max(...sessionsPerStatement)).toBe(1);
        for (const sessionId of new Set(writers.map((writer) => writer.sessionId))) {
          const mine = written.filter((stored) => stored.sessionId === sessionId);
          await checkSession(store, sessionId, mine);
          expect((await store.readSession({ sessionId })).events).toHaveLength(mine.length);
        }
      } finally {
        spy.mockRestore();
      }
    });

    it("appends that name blobs take the one-statement path of the others, and index the blobs for their session", async () => {
      const open = await kind.database();
      // Watched before the stores are made: a store binds the method when constructed.
      const batches = vi.spyOn(kind.backend.prototype, "appendAtHeads");
      const store = await open();
      const putBlobs = store.putBlobs?.bind(store) as NonNullable<EventStore["putBlobs"]>;
      const sessionId = `refs-${uuidv7()}`;
      const runs = ["a", "b", "c", "d"];
      const written = await startRuns(store, runsOf(sessionId, runs));
      // Put with no session: only the appends' index keeps these blobs from collectBlobs.
      const [own1, own2, shared, later] = await putBlobs(
        ["own 1", "own 2", "shared", "later"].map((text) => `${text} ${uuidv7()}`),
      );
      const named = (refs: (string | undefined)[]) =>
        ({ type: "x.named", evidenceRefs: refs as string[] }) as never;
      const write = vi.spyOn(kind.backend.prototype, "write");
      try {
        // In one tick: two appends that name blobs, two that do not, on four runs.
        const answers = await appendAtOnce(
          store,
          [
            { sessionId, runId: "a", expectedSeq: 1, events: [named([own1, shared])] },
            { sessionId, runId: "b", expectedSeq: 1, events: [event("x.plain")] },
            {
              sessionId,
              runId: "c",
              expectedSeq: 1,
              events: [named([shared, own2]), event("x.plain")],
            },
            { sessionId, runId: "d", expectedSeq: 1, events: [event("x.plain")] },
          ],
          written,
        );
        for (const answer of answers) expect(answer).toMatchObject({ deduplicated: false });
        const alone = await store.append({
          sessionId,
          runId: "a",
          expectedSeq: 2,
          events: [named([later])],
        });
        written.push(...alone.events);
        // No append went the transactional way; those naming blobs went where the others go
        // (gathered into statements of several when enough arrive at once: see below).
        expect(write).not.toHaveBeenCalled();
        expect(sentIn(batches).filter((append) => append.refs.length > 0)).toHaveLength(3);
      } finally {
        write.mockRestore();
        batches.mockRestore();
      }
      await checkSession(store, sessionId, written);
      expect(await store.collectBlobs?.({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
      expect(await closeAndDelete(store, sessionId, runs)).toMatchObject({
        deletedBlobs: 4,
      });
    });

    it("appends that carry blobs store them in the statement they go out in: no put, no program", async () => {
      const open = await kind.database();
      // Watched before the stores are made: a store binds the method when constructed.
      const batches = vi.spyOn(kind.backend.prototype, "appendAtHeads");
      const store = await open();
      const other = await open();
      const sessionId = `carried-${uuidv7()}`;
      const runs = ["a", "b", "c", "d"];
      const written = await startRuns(store, runsOf(sessionId, runs));
      const contents = ["a1", "a2", "c1", "d1", "d2", "d3", "later"].map(
        (text) => `${text} ${uuidv7()} ${"words ".repeat(50)}`,
      );
      const ref = (index: number) => `sha256:${sha256Hex(contents[index] as string)}`;
      const named = (refs: string[]) => ({ type: "x.named", evidenceRefs: refs }) as never;
      const put = vi.spyOn(kind.backend.prototype, "putBlobs");
      const write = vi.spyOn(kind.backend.prototype, "write");
      try {
        const answers = await appendAtOnce(
          store,
          [
            {
              sessionId,
              runId: "a",
              expectedSeq: 1,
              events: [named([ref(0), ref(1)])],
              blobs: [contents[0] as string, contents[1] as string],
            },
            { sessionId, runId: "b", expectedSeq: 1, events: [event("x.plain")] },
            {
              sessionId,
              runId: "c",
              expectedSeq: 1,
              events: [named([ref(2)]), event("x.plain")],
              blobs: [contents[2] as string],
            },
            {
              sessionId,
              runId: "d",
              expectedSeq: 1,
              // d3 is carried but named by no event: claimed by the session all the same.
              events: [named([ref(3), ref(4)])],
              blobs: [contents[3] as string, contents[4] as string, contents[5] as string],
            },
          ],
          written,
        );
        for (const answer of answers) expect(answer).toMatchObject({ deduplicated: false });
        const alone = await store.append({
          sessionId,
          runId: "a",
          expectedSeq: 2,
          events: [named([ref(6)])],
          blobs: [contents[6] as string],
        });
        written.push(...alone.events);
        expect(write).not.toHaveBeenCalled();
        expect(put).not.toHaveBeenCalled();
        expect(sentIn(batches).filter((append) => append.blobs.length > 0)).toHaveLength(4);
        // A stale head (another store wrote the run): refused, and nothing of it stored.
        await other.append({ sessionId, runId: "b", expectedSeq: 2, events: [event("x.plain")] });
        const late = `late ${uuidv7()}`;
        await expect(
          store.append({
            sessionId,
            runId: "b",
            expectedSeq: 2,
            events: [named([`sha256:${sha256Hex(late)}`])],
            blobs: [late],
          }),
        ).rejects.toMatchObject({ code: "conflict" });
        await expect(store.getBlob(`sha256:${sha256Hex(late)}`)).rejects.toMatchObject({
          code: "not-found",
        });
      } finally {
        put.mockRestore();
        write.mockRestore();
        batches.mockRestore();
      }
      for (let index = 0; index < contents.length; index++)
        expect(new TextDecoder().decode(await store.getBlob(ref(index)))).toBe(contents[index]);
      // Only the session's claims keep them: nothing for collectBlobs at grace 0.
      expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
      expect(await closeAndDelete(store, sessionId, runs)).toMatchObject({
        deletedBlobs: contents.length,
      });
    });

    it("in one statement, blobs carried are stored once, only for appends written", async () => {
      await twoStoresWatched(kind, async (a, b, spy) => {
        // Nine runs, each of its own session where one statement takes several (MariaDB), of one
        // session otherwise; nine, so that statements carry several appends however the store
        // shares them out.
        const session = `once-${uuidv7()}`;
        const places = Array.from({ length: 9 }, (_, index) =>
          kind.acrossSessions
            ? { sessionId: `s${index}-${uuidv7()}`, runId: "r" }
            : { sessionId: session, runId: `r${index}` },
        );
        await startRuns(a, places);
        // B moves the third run: A's cached head for it is stale, its append a conflict.
        await b.append({
          ...(places[2] as (typeof places)[number]),
          expectedSeq: 1,
          events: [event("x.b")],
        });
        const text = (label: string) => `${label} ${uuidv7()} ${"words ".repeat(40)}`;
        const shared = text("the system prompt every run carries");
        const own = places.map((_, index) => text(`own ${index}`));
        const refOf = (content: string) => `sha256:${sha256Hex(content)}`;
        const answers = await appendAtOnce(
          a,
          places.map((place, index) => ({
            ...place,
            expectedSeq: 1,
            events: [
              { type: "x.named", evidenceRefs: [refOf(shared), refOf(own[index] as string)] },
            ] as never,
            blobs: [own[index] as string, shared],
          })),
          [],
        );
        expect(gatheredWith(spy, (append) => append.blobs.length > 0)).toBe(true);
        expect(LedgerError.isInstance(answers[2], "conflict")).toBe(true);
        await expect(a.getBlob(refOf(own[2] as string))).rejects.toMatchObject({
          code: "not-found",
        });
        for (const index of places.keys()) {
          if (index === 2) continue;
          expect(answers[index]).toMatchObject({ deduplicated: false });
          expect(new TextDecoder().decode(await a.getBlob(refOf(own[index] as string)))).toBe(
            own[index],
          );
        }
        expect(new TextDecoder().decode(await a.getBlob(refOf(shared)))).toBe(shared);
        expect(await a.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
      });
    });

    it("two stores writing runs of four sessions, every append carrying blobs others carry too: each written once, every blob kept", async () => {
      await twoStoresWatched(kind, async (a, b, spy) => {
        await checkSharedBlobWriters([a, b], `shared-blobs-${lastDatabase}`);
        expect(gatheredWith(spy, (append) => append.blobs.length > 0)).toBe(true);
      });
    });

    // Only where one statement carries several sessions (MariaDB).
    if (kind.acrossSessions) {
      it("statements of several sessions from two stores at once: no deadlock, no gap, nothing lost", async () => {
        await twoStoresWatched(kind, async (a, b, spy) => {
          const stores = [a, b];
          const writers = sixteenWriters(stores, `across-${lastDatabase}`);
          const written: LedgerEvent[] = [];
          await Promise.all(
            writers.map(async (writer) => {
              for (let step = 0; step < 15; step++) {
                const result = await writer.store.append({
                  sessionId: writer.sessionId,
                  runId: writer.runId,
                  expectedSeq: step,
                  events: [event(step === 0 ? "run.started" : "x.step", step)],
                });
                expect(result.deduplicated).toBe(false);
                written.push(...result.events);
              }
            }),
          );
          const sessions = spy.mock.calls.map(
            ([appends]) => new Set(appends.map((append) => append.sessionId)).size,
          );
          expect(Math.max(...sessions)).toBeGreaterThan(1);
          for (const sessionId of new Set(writers.map((writer) => writer.sessionId))) {
            const mine = written.filter((stored) => stored.sessionId === sessionId);
            expect(mine).toHaveLength(60);
            await checkSession(stores[0] as EventStore, sessionId, mine);
          }
        });
      });

      it("in one statement of several sessions, a stale head or a clashing id answers for itself", async () => {
        await twoStoresWatched(kind, async (a, b, spy) => {
          // Nine, so that statements carry several appends however the store shares them out.
          const sessions = Array.from({ length: 9 }, (_, index) => `s${index}-${uuidv7()}`);
          const others = (skip: number) =>
            sessions.flatMap((_, index) => (index === skip ? [] : [index]));
          const gathered = (index: number) =>
            spy.mock.calls.some(
              ([appends]) =>
                appends.length > 1 &&
                appends.some((append) => append.sessionId === sessions[index]),
            );
          const written = await startRuns(
            a,
            sessions.map((sessionId) => ({ sessionId, runId: "r" })),
          );
          // B moves the run of s2: A's cached head for it is stale.
          const moved = await b.append({
            sessionId: sessions[2] as string,
            runId: "r",
            expectedSeq: 1,
            events: [event("x.b")],
          });
          written.push(...moved.events);
          const round = (events: (index: number) => unknown[], expectedSeq: number) =>
            appendAtOnce(
              a,
              sessions.map((sessionId, index) => ({
                sessionId,
                runId: "r",
                expectedSeq,
                events: events(index) as never,
              })),
              written,
            );
          const first = await round((index) => [event("x.one", index)], 1);
          expect(gathered(2)).toBe(true);
          expect(LedgerError.isInstance(first[2], "conflict")).toBe(true);
          for (const index of others(2))
            expect(first[index]).toMatchObject({ deduplicated: false });
          // An id already stored in s3 fails the statement on its unique index; each append is
          // then written (or refused) on its own.
          const taken = written[3]?.eventId as string;
          spy.mockClear();
          const second = await round(
            (index) => [
              index === 3
                ? { eventId: taken, type: "x.clash", payload: null }
                : event("x.two", index),
            ],
            2,
          );
          expect(gathered(3)).toBe(true);
          expect(LedgerError.isInstance(second[3], "duplicate-event")).toBe(true);
          for (const index of others(3))
            expect(second[index]).toMatchObject({ deduplicated: false });
          for (const sessionId of sessions) {
            const mine = written.filter((stored) => stored.sessionId === sessionId);
            await checkSession(a, sessionId, mine);
            expect((await a.readSession({ sessionId })).events).toHaveLength(mine.length);
          }
        });
      });
    }

    it("in one statement, a stale head or a clashing id answers for itself, the others are written", async () => {
      await twoStoresWatched(kind, async (a, b, spy) => {
        const sessionId = `mixed-${uuidv7()}`;
        // Nine, so that statements carry several appends however the store shares them out.
        const runs = Array.from({ length: 9 }, (_, index) => `r${index}`);
        const others = (skip: number) =>
          runs.flatMap((_, index) => (index === skip ? [] : [index]));
        const gathered = (runId: string) =>
          spy.mock.calls.some(
            ([appends]) => appends.length > 1 && appends.some((append) => append.runId === runId),
          );
        const written = await startRuns(a, runsOf(sessionId, runs));
        // B moves r3: A's cached head for it is stale.
        written.push(
          ...(await b.append({ sessionId, runId: "r3", expectedSeq: 1, events: [event("x.b")] }))
            .events,
        );
        const round = (
          events: (runId: string) => unknown[],
          expectedSeq: (runId: string) => number,
        ) =>
          // Submitted in one tick: the first starts at once, the others go out in statements of
          // several appends at the end of the tick.
          appendAtOnce(
            a,
            runs.map((runId) => ({
              sessionId,
              runId,
              expectedSeq: expectedSeq(runId),
              events: events(runId) as never,
            })),
            written,
          );
        const first = await round(
          (runId) => [event("x.one", runId)],
          () => 1,
        );
        expect(gathered("r3")).toBe(true);
        expect(LedgerError.isInstance(first[3], "conflict")).toBe(true);
        expect((first[3] as ConflictError).actualSeq).toBe(2);
        for (const index of others(3)) expect(first[index]).toMatchObject({ deduplicated: false });
        // An id already stored in the session fails the whole statement on its unique index;
        // each append is then written (or refused) on its own. (r3's conflict dropped A's cached
        // head for it: r3 takes the transactional path, r0 starts alone, and r2 goes out with
        // others.)
        const taken = written[0]?.eventId as string;
        spy.mockClear();
        const second = await round(
          (runId) => [
            runId === "r2"
              ? { eventId: taken, type: "x.clash", payload: null }
              : event("x.two", runId),
          ],
          () => 2,
        );
        expect(gathered("r2")).toBe(true);
        expect(LedgerError.isInstance(second[2], "duplicate-event")).toBe(true);
        for (const index of others(2)) expect(second[index]).toMatchObject({ deduplicated: false });
        await checkSession(a, sessionId, written);
        expect((await a.readSession({ sessionId })).events).toHaveLength(written.length);
        expect((await a.runHead({ sessionId, runId: "r2" })).length).toBe(2);
      });
    });
  });
}
