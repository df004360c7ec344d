import { randomBytes } from "node:crypto";
import mysql from "mysql2/promise";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { uuidv7 } from "../../events/ids.js";
import type { NewEvent } from "../../events/types.js";
import { MemoryEventStore } from "../../store/memory-store.js";
import { checkLargeBatch } from "../../testing/large-batch.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { MysqlEventStore } from "./mysql-store.js";
import { mysqlFileDatabase } from "./testing/file-database.js";

const available = await serverAvailable("mysql");
const { database, pool } = mysqlFileDatabase(available);

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
