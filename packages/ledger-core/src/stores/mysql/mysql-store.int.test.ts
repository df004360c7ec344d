import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { uuidv7 } from "../../events/ids.js";
import type { NewEvent } from "../../events/types.js";
import { MemoryEventStore } from "../../store/memory-store.js";
import { checkInitWithoutCreate } from "../../testing/init-without-create.js";
import { checkLargeBatch } from "../../testing/large-batch.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkSharedHandles } from "../../testing/shared-handles.js";
import { SqlEventStore } from "../sql/sql-event-store.js";
import { appendThroughUrl } from "../sql/testing/append-through-url.js";
import { MysqlBackend } from "./mysql-backend.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const database = `ledger_store_${uuidv7().replaceAll("-", "")}`;
const pool = available
  ? mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 3 })
  : undefined;
// Made in a hook, not at load: a run that filters these tests out leaves no database.
beforeAll(async () => {
  await pool?.query(`CREATE DATABASE \`${database}\``);
});
afterAll(async () => {
  await pool?.query(`DROP DATABASE IF EXISTS \`${database}\``);
  await pool?.end();
});

/**
 * Runs `use` on a database of its own (named `${database}_${suffix}`, reached by the URL's path),
 * dropped after: tests that read whole tables, or that must see an empty database.
 */
async function inOwnDatabase(
  suffix: string,
  use: (own: string, url: string) => Promise<void>,
): Promise<void> {
  const own = `${database}_${suffix}`;
  await pool?.query(`CREATE DATABASE \`${own}\``);
  const url = new URL(SERVER_URLS.mysql);
  url.pathname = `/${own}`;
  try {
    await use(own, url.toString());
  } finally {
    await pool?.query(`DROP DATABASE IF EXISTS \`${own}\``);
  }
}

/** Every statement text sent through `own`, or through a connection it hands out, from now on. */
function statementsSent(own: mysql.Pool): string[] {
  const sent: string[] = [];
  type Sender = Record<string, (...args: unknown[]) => Promise<unknown>>;
  const watch = (target: object) => {
    for (const name of ["query", "execute"]) {
      const original = (target as Sender)[name]?.bind(target);
      (target as Sender)[name] = (...args: unknown[]) => {
        const first = args[0] as string | { sql: string };
        sent.push(typeof first === "string" ? first : first.sql);
        return original?.(...args) as Promise<unknown>;
      };
    }
  };
  watch(own);
  const getConnection = own.getConnection.bind(own);
  own.getConnection = async () => {
    const connection = await getConnection();
    if (!(connection as unknown as { watched?: true }).watched) {
      (connection as unknown as { watched?: true }).watched = true;
      watch(connection);
    }
    return connection;
  };
  return sent;
}

/** Statements the one connection of `own` has prepared so far (its session counter). */
async function statementsPrepared(own: mysql.Pool): Promise<number> {
  const [rows] = (await own.query("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")) as unknown as [
    { Value: string }[],
  ];
  return Number(rows[0]?.Value);
}

describe.skipIf(!available)("MysqlEventStore", () => {
  it("two stores on one database (two processes) answer random sequences as the reference does, and racing writers through both lose nothing", async () => {
    // Each caches the run heads of its own appends: the other's commits must show. Its own
    // database: the other tests read whole tables.
    await inOwnDatabase("two", (_, url) =>
      checkSharedHandles([1, 2].map(() => new MysqlEventStore({ uri: url }))),
    );
  });

  it("init({ create: false }) makes no table where there is no ledger, and opens one that is there", async () => {
    await inOwnDatabase("ro", (own, url) =>
      checkInitWithoutCreate({
        open: () => new MysqlEventStore({ uri: url }),
        leftovers: async () => {
          const [tables] = (await (pool as mysql.Pool).query(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
            [own],
          )) as unknown as [unknown[]];
          return tables.length;
        },
      }),
    );
  });

  it("opens through openStore(mysql://...)", async () => {
    // A database of its own (the URL's path): not the server's test database, where it would
    // leave tables, nor the one the other tests read whole tables of.
    await inOwnDatabase("url", async (own, url) => {
      // With rows nested by table too: mysql2 then nests every statement's rows that does not
      // say otherwise, and the store's statements say so.
      for (const uri of [url, `${url}?nestTables=true`]) {
        const { sessionId, description } = await appendThroughUrl(uri);
        expect(description.kind).toBe("mysql");
        const [rows] = (await (pool as mysql.Pool).query(
          `SELECT count(*) AS n FROM \`${own}\`.events WHERE session_id = ?`,
          [sessionId],
        )) as unknown as [{ n: number }[]];
        expect(Number(rows[0]?.n)).toBe(1);
      }
    });
  });

  it("keeps its tables in { database } of the application's pool and leaves the pool open", async () => {
    const store = new MysqlEventStore({ pool: pool as mysql.Pool, database });
    await Promise.all([store.init(), store.init()]);
    const payload = { text: "nul\u0000 emoji 😀", z: 1 };
    const { events } = await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "input.received", payload }],
    });
    await store.close();
    const [rows] = (await (pool as mysql.Pool).query(
      `SELECT body FROM \`${database}\`.events`,
    )) as unknown as [{ body: string }[]];
    expect(rows[0]?.body).toBe(JSON.stringify(events[0]));
    const [current] = (await (pool as mysql.Pool).query(
      "SELECT DATABASE() AS name",
    )) as unknown as [{ name: string }[]];
    expect(current[0]?.name).toBe(new URL(SERVER_URLS.mysql).pathname.slice(1));
  });

  it("puts a few blobs and their claims in one statement and one commit, on MariaDB, prepared once", async () => {
    // One connection, so its session counters count every statement the store prepares.
    const own = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 1 });
    const store = new MysqlEventStore({ pool: own, database });
    try {
      await store.init();
      const sent = statementsSent(own);
      const sessionId = `put-${uuidv7()}`;
      await store.putBlobs?.(
        ["one", "two", "three"].map((x) => `${x} ${uuidv7()}`),
        {
          sessionId,
        },
      );
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/^BEGIN NOT ATOMIC[\s\S]*START TRANSACTION[\s\S]*blob_refs/);
      const [claims] = (await (pool as mysql.Pool).query(
        `SELECT blob_ref FROM \`${database}\`.blob_refs WHERE session_id = ?`,
        [sessionId],
      )) as unknown as [{ blob_ref: string }[]];
      expect(claims).toHaveLength(3);
      // The next puts of that shape (a recorded call's) use the prepared block: no prepare's
      // round trip in front of every call.
      const before = await statementsPrepared(own);
      for (const turn of [1, 2])
        await store.putBlobs?.(
          ["one", "two", "three"].map((x) => `${x} ${turn} ${uuidv7()}`),
          { sessionId },
        );
      expect((await statementsPrepared(own)) - before).toBe(0);
    } finally {
      await store.close();
      await own.end();
    }
  });

  it("an append that carries a few blobs is one block, its blobs one INSERT in it, prepared once", async () => {
    const own = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 1 });
    const store = new MysqlEventStore({ pool: own, database });
    try {
      await store.init();
      const sessionId = `carried-${uuidv7()}`;
      await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      const sent = statementsSent(own);
      const call = (turn: number) => {
        const blobs = ["message", "list node"].map((x) => `${x} ${turn} ${uuidv7()}`);
        return store.append({
          sessionId,
          runId: "r",
          expectedSeq: turn,
          events: [
            { type: "x.call", evidenceRefs: blobs.map((blob) => `sha256:${sha256Hex(blob)}`) },
          ],
          blobs,
        });
      };
      await call(1);
      expect(sent).toHaveLength(1);
      expect(sent[0]?.match(/INSERT INTO \S+blobs /g)).toHaveLength(1);
      const before = await statementsPrepared(own);
      for (const turn of [2, 3]) await call(turn);
      expect((await statementsPrepared(own)) - before).toBe(0);
      // Each call one block, nothing else (the rest is the counter's SHOW).
      expect(sent.filter((text) => !text.startsWith("SHOW"))).toHaveLength(3);
    } finally {
      await store.close();
      await own.end();
    }
  });

  it("takes any database name the server takes: quotes, dashes, dots and spaces are quoted, never spliced", async () => {
    const name = `agent-ledger \`v1.2\` it's/${uuidv7().slice(-12)}`;
    const quoted = `\`${name.replaceAll("`", "``")}\``;
    await (pool as mysql.Pool).query(`CREATE DATABASE ${quoted}`);
    try {
      const store = new MysqlEventStore({ pool: pool as mysql.Pool, database: name });
      await store.init();
      const events: NewEvent[] = [{ type: "input.received", payload: { text: "hi" } }];
      await store.append({ sessionId: "s", runId: "r", expectedSeq: 0, events });
      await store.append({ sessionId: "s", runId: "r", expectedSeq: 1, events });
      expect((await store.readSession({ sessionId: "s" })).events.map((e) => e.seq)).toEqual([
        0, 1,
      ]);
      expect((await store.listSessions()).sessions).toMatchObject([
        { sessionId: "s", eventCount: 2 },
      ]);
      await store.close();
      const [rows] = (await (pool as mysql.Pool).query(
        `SELECT COUNT(*) AS n FROM ${quoted}.events`,
      )) as unknown as [{ n: number }[]];
      expect(Number(rows[0]?.n)).toBe(2);
    } finally {
      await (pool as mysql.Pool).query(`DROP DATABASE IF EXISTS ${quoted}`);
    }
  });

  it("refuses a database name the server would refuse, with its path, before connecting", () => {
    for (const name of ["", "a\u0000b", "trailing ", "x".repeat(65), "emoji 😀"])
      expect(() => new MysqlEventStore({ uri: SERVER_URLS.mysql, database: name })).toThrow(
        expect.objectContaining({ code: "invalid-argument", path: "$.database" }),
      );
  });

  it("compares ids byte for byte: ids differing in case or accents are distinct", async () => {
    const store = new MysqlEventStore({ pool: pool as mysql.Pool, database });
    await store.init();
    for (const sessionId of ["Case", "case", "cäse"]) {
      await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 0,
        events: [{ eventId: "E", type: "run.started" }],
      });
    }
    const { sessions } = await store.listSessions();
    expect(sessions.map((session) => session.sessionId)).toEqual(
      expect.arrayContaining(["Case", "case", "cäse"]),
    );
    expect((await store.runHead({ sessionId: "case", runId: "r" })).length).toBe(1);
    await store.close();
  });

  it("keeps the common batch shapes prepared and closes a mixed one after use", async () => {
    // One connection, so every statement the store prepares is in its cache.
    const single = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 1 });
    const store = new MysqlEventStore({ pool: single, database });
    try {
      await store.init();
      const sessionId = `shapes-${uuidv7()}`;
      const runs = ["r0", "r1", "r2", "r3", "r4"];
      for (const runId of runs)
        await store.append({ sessionId, runId, expectedSeq: 0, events: [{ type: "run.started" }] });
      // Submitted in one tick: two appends start alone, three go out as one batch.
      const round = (expectedSeq: number, sizes: number[]) =>
        Promise.all(
          runs.map((runId, index) =>
            store.append({
              sessionId,
              runId,
              expectedSeq,
              events: Array.from({ length: sizes[index] as number }, () => ({ type: "x.step" })),
            }),
          ),
        );
      const cached = async () => {
        const connection = await single.getConnection();
        const core = (
          connection as unknown as { connection: { _statements: Map<string, unknown> } }
        ).connection;
        const texts = [...core._statements.keys()];
        connection.release();
        return texts;
      };
      // A batch of appends of one event each: kept (its text moves a second run, `m1`).
      await round(1, [1, 1, 1, 1, 1]);
      expect((await cached()).some((text) => text.includes("SET m1 = ROW_COUNT()"))).toBe(true);
      // A batch mixing sizes: closed after use, so no kept text both moves a second run and
      // inserts a second event for one append.
      await round(2, [1, 1, 2, 1, 2]);
      expect(
        (await cached()).some(
          (text) => text.includes("SET m1 = ROW_COUNT()") && text.includes("c + 2"),
        ),
      ).toBe(false);
      const stored = (await store.readSession({ sessionId })).events;
      expect(stored.map((event) => event.commitCursor)).toEqual(
        Array.from({ length: 5 + 5 + 7 }, (_, index) => index + 1),
      );
    } finally {
      await store.close();
      await single.end();
    }
  });

  it("writes batches past MariaDB's 65,535 placeholders: one append of 10,000 events, and 12 appends of 900 gathered in one tick", async () => {
    // The one-statement block binds 7 values per event: both were refused ("Prepared statement
    // contains too many placeholders") and answered store-unavailable.
    const store = new MysqlEventStore({ pool: pool as mysql.Pool, database });
    try {
      await store.init();
      await checkLargeBatch(store, 10_000);
      const sessionId = `gathered-${uuidv7()}`;
      const runs = Array.from({ length: 12 }, (_, index) => `r${index}`);
      for (const runId of runs)
        await store.append({ sessionId, runId, expectedSeq: 0, events: [{ type: "run.started" }] });
      const results = await Promise.all(
        runs.map((runId) =>
          store.append({
            sessionId,
            runId,
            expectedSeq: 1,
            events: Array.from({ length: 900 }, () => ({ type: "x.step" })),
          }),
        ),
      );
      for (const result of results) expect(result.events.map((event) => event.seq)[899]).toBe(900);
      const cursors = [];
      for (let after = 0; ; ) {
        const page = await store.readSession({ sessionId, after, limit: 5000 });
        if (page.events.length === 0) break;
        for (const event of page.events) cursors.push(event.commitCursor);
        after = page.nextCursor;
      }
      expect(cursors).toEqual(Array.from({ length: 12 * 901 }, (_, index) => index + 1));
    } finally {
      await store.close();
    }
  }, 60_000);

  it("keeps every statement within max_allowed_packet: 100 events of 200 KB are written whole, an event no statement can carry is invalid-event at its path and nothing is written", async () => {
    // A batch was one statement: 20 MB of events failed as store-unavailable ("Got a packet
    // bigger than 'max_allowed_packet' bytes"), on the transactional path and the one-statement
    // block alike, and so did one event too big for any statement, which no retry gets past.
    const store = new MysqlEventStore({ pool: pool as mysql.Pool, database });
    try {
      await store.init();
      const sessionId = `packets-${uuidv7()}`;
      const text = "y".repeat(200 * 1024);
      const large = () =>
        Array.from(
          { length: 100 },
          (_, index): NewEvent => ({ type: "x.step", payload: { index, text } }),
        );
      await store.append({ sessionId, runId: "new", expectedSeq: 0, events: large() });
      await store.append({
        sessionId,
        runId: "cached",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      await store.append({ sessionId, runId: "cached", expectedSeq: 1, events: large() });
      expect((await store.runHead({ sessionId, runId: "new" })).length).toBe(100);
      expect((await store.runHead({ sessionId, runId: "cached" })).length).toBe(101);

      const [rows] = (await (pool as mysql.Pool).query(
        "SELECT @@max_allowed_packet AS packet",
      )) as unknown as [{ packet: number }[]];
      const huge = "z".repeat(Number(rows[0]?.packet));
      const before = (await store.readSession({ sessionId })).events;
      for (const [runId, expectedSeq] of [
        ["cached", 101],
        ["other", 0],
      ] as const) {
        const refused = store.append({
          sessionId,
          runId,
          expectedSeq,
          events: [{ type: "x.step" }, { type: "x.step", payload: huge }],
        });
        await expect(refused).rejects.toMatchObject({
          code: "invalid-event",
          path: "$.events[1]",
          message: expect.stringContaining("max_allowed_packet"),
        });
      }
      expect((await store.readSession({ sessionId })).events).toEqual(before);
      expect((await store.runHead({ sessionId, runId: "other" })).exists).toBe(false);
      await store.append({
        sessionId,
        runId: "cached",
        expectedSeq: 101,
        events: [{ type: "x.step" }],
      });
    } finally {
      await store.close();
    }
  }, 60_000);

  it("puts blobs within max_allowed_packet: 30 blobs of 1 MB in one call, and a blob no statement can carry is invalid-argument at its index with nothing stored", async () => {
    // One INSERT carried every blob as hex: 30 MB failed as store-unavailable (the server
    // dropped the connection), and so did one blob too big for any statement.
    const store = new MysqlEventStore({ pool: pool as mysql.Pool, database });
    try {
      await store.init();
      const incompressible = (bytes: number) => randomBytes(bytes / 2).toString("hex");
      const contents = Array.from({ length: 30 }, () => incompressible(1024 * 1024));
      const refs = await store.putBlobs(contents);
      expect((await store.getBlobs(refs)).size).toBe(30);

      const [rows] = (await (pool as mysql.Pool).query(
        "SELECT @@max_allowed_packet AS packet",
      )) as unknown as [{ packet: number }[]];
      const small = `small ${uuidv7()}`;
      const huge = randomBytes(Number(rows[0]?.packet) / 2);
      await expect(store.putBlobs([small, small, huge])).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$[2]",
        message: expect.stringContaining("max_allowed_packet"),
      });
      await expect(store.putBlob(huge)).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$",
      });
      const [smallRef] = await new MemoryEventStore().putBlobs([small]);
      await expect(store.getBlob(smallRef as string)).rejects.toMatchObject({ code: "not-found" });
    } finally {
      await store.close();
    }
  }, 60_000);
});

/** The store over a backend that reports no one-statement path, as on MySQL. */
class MysqlWithoutBlocks extends MysqlBackend {
  override appendsAtHead(): boolean {
    return false;
  }
}
class StoreWithoutBlocks extends SqlEventStore {
  constructor(backend: MysqlBackend) {
    super(backend, "mysql");
  }
}

/** A backend on the test database through the shared pool (which it leaves open). */
const backendOptions = () => ({
  pool: pool as mysql.Pool,
  owned: false,
  database,
  location: "test",
});

describe.skipIf(!available)("MysqlEventStore on a server without anonymous blocks", () => {
  it("knows after init that MariaDB has the one-statement path", async () => {
    const backend = new MysqlBackend(backendOptions());
    await backend.init();
    expect(backend.appendsAtHead()).toBe(true);
  });

  it("plans no one-statement append there: every append takes the transactional path", async () => {
    const backend = new MysqlWithoutBlocks(backendOptions());
    // Watched before the store is made: the store binds the method when it is constructed.
    const atHeads = vi.spyOn(backend, "appendAtHeads");
    const store = new StoreWithoutBlocks(backend);
    await store.init();
    const sessions = [`noblock-a-${uuidv7()}`, `noblock-b-${uuidv7()}`];
    const results = await Promise.all(
      Array.from({ length: 6 }, async (_, writer) => {
        const sessionId = sessions[writer % 2] as string;
        const written = [];
        for (let seq = 0; seq < 8; seq++) {
          const result = await store.append({
            sessionId,
            runId: `run-${writer}`,
            expectedSeq: seq,
            events: [{ type: seq === 0 ? "run.started" : "x.step", payload: seq }],
          });
          written.push(...result.events);
        }
        return written;
      }),
    );
    expect(atHeads).not.toHaveBeenCalled();
    for (const sessionId of sessions) {
      const stored = (await store.readSession({ sessionId })).events;
      expect(stored.map((event) => event.commitCursor)).toEqual(
        Array.from({ length: 24 }, (_, index) => index + 1),
      );
      const mine = results.flat().filter((event) => event.sessionId === sessionId);
      expect(new Set(stored.map((event) => event.eventId))).toEqual(
        new Set(mine.map((event) => event.eventId)),
      );
    }
  });
});
