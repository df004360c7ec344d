import type mysql from "mysql2/promise";
import { describe, expect, it, vi } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import type { NewEvent } from "../../events/types.js";
import { checkInitWithoutCreate } from "../../testing/init-without-create.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkSharedHandles } from "../../testing/shared-handles.js";
import { SqlEventStore } from "../sql/sql-event-store.js";
import { appendThroughUrl } from "../sql/testing/append-through-url.js";
import { MysqlBackend } from "./mysql-backend.js";
import { MysqlEventStore } from "./mysql-store.js";
import { mysqlFileDatabase } from "./testing/file-database.js";

const available = await serverAvailable("mysql");
const { database, pool } = mysqlFileDatabase(available);

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
