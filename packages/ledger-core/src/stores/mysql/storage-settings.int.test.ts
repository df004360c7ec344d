import mysql from "mysql2/promise";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { verifyRun } from "../../inspect/verify-run.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { MysqlEventStore } from "./mysql-store.js";
import { STRICT_SESSION } from "./session-settings.js";

// The ledger's tables are InnoDB tables of utf8mb4 text, or the store writes nothing: the
// shipped migrations name neither, so the database's default character set and the session's
// default engine decide what they make, and a lenient sql_mode would store what a column
// cannot hold changed ('?' for each character latin1 lacks) and acknowledge it.

const available = await serverAvailable("mysql");
const places = freshPlaces(afterAll);
const users: string[] = [];
const pools: mysql.Pool[] = [];
const admin = available ? await mysql.createConnection(SERVER_URLS.mysql) : undefined;

afterAll(async () => {
  for (const pool of pools) await pool.end();
  for (const user of users) await admin?.query(`DROP USER IF EXISTS '${user}'@'%'`);
  await admin?.end();
});

/** A database of its own (`options` as in CREATE DATABASE), dropped after, and its URL. */
const freshDatabase = (options = "") => places.database("storage").create(options);

/** A pool of the application's, each new connection set up with `setup` first. */
function appPool(url: string, setup: string): mysql.Pool {
  const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
  pool.pool.on("connection", (connection) => {
    connection.query(setup);
  });
  pools.push(pool);
  return pool;
}

async function tables(database: string): Promise<{ name: string; engine: string }[]> {
  const [rows] = (await (admin as mysql.Connection).query(
    "SELECT table_name AS name, engine FROM information_schema.tables WHERE table_schema = ? ORDER BY 1",
    [database],
  )) as unknown as [{ name: string; engine: string }[]];
  return rows;
}

const text = { s: "héllo 日本語 🚀" };

describe.skipIf(!available)(
  "MysqlEventStore on a database whose tables would not hold the ledger",
  () => {
    it("refuses a database whose default character set is latin1 at init, creating nothing in it", async () => {
      const { database, url } = await freshDatabase("CHARACTER SET latin1");
      const store = new MysqlEventStore({ uri: url });
      await expect(store.init()).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.database",
        message: expect.stringContaining(
          `ALTER DATABASE \`${database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
        ),
      });
      await store.close();
      expect(await tables(database)).toEqual([]);
    });

    it("refuses a session whose default storage engine is MyISAM at init, creating nothing", async () => {
      const { database, url } = await freshDatabase();
      const store = new MysqlEventStore({
        pool: appPool(url, "SET SESSION default_storage_engine = 'MyISAM'"),
      });
      await expect(store.init()).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.pool",
        message: expect.stringMatching(/default_storage_engine is MyISAM.*InnoDB/),
      });
      expect(await tables(database)).toEqual([]);
    });

    it("refuses an existing ledger whose events table was converted to latin1, and a table a failed init left MyISAM", async () => {
      const { database, url } = await freshDatabase();
      const first = new MysqlEventStore({ uri: url });
      await first.init();
      // Text latin1 holds: the server converts the table without complaint.
      await first.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started", payload: { s: "héllo" } }],
      });
      await first.close();
      await admin?.query(
        `ALTER TABLE \`${database}\`.events CONVERT TO CHARACTER SET latin1 COLLATE latin1_swedish_ci`,
      );
      const store = new MysqlEventStore({ uri: url });
      await expect(store.init()).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.database",
        message: expect.stringMatching(
          /events is not utf8mb4 \(column event_type latin1.*ALTER TABLE `[^`]+`\.`events` CONVERT TO CHARACTER SET utf8mb4/,
        ),
      });
      await store.close();

      // What an init under default_storage_engine=MyISAM left before this check: an empty MyISAM
      // table, and no schema version. Finishing that ledger would keep the table MyISAM.
      const { database: halfMade, url: halfMadeUrl } = await freshDatabase();
      await admin?.query(
        `CREATE TABLE \`${halfMade}\`.blobs (blob_ref varchar(80) NOT NULL PRIMARY KEY, content longblob NOT NULL) ENGINE=MyISAM`,
      );
      const resumed = new MysqlEventStore({ uri: halfMadeUrl });
      await expect(resumed.init()).rejects.toMatchObject({
        code: "invalid-argument",
        message: expect.stringContaining(`ALTER TABLE \`${halfMade}\`.\`blobs\` ENGINE=InnoDB`),
      });
      await resumed.close();
      expect(await tables(halfMade)).toEqual([{ name: "blobs", engine: "MyISAM" }]);
    });

    it("refuses an application's pool whose sql_mode is not strict", async () => {
      const { database, url } = await freshDatabase();
      const store = new MysqlEventStore({ pool: appPool(url, "SET SESSION sql_mode = ''") });
      await expect(store.init()).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.pool",
        message: expect.stringMatching(/not strict.*STRICT_TRANS_TABLES/),
      });
      expect(await tables(database)).toEqual([]);
    });

    it("makes the connections of its own pool strict, and refuses a URL that would reset them on release", async () => {
      const connection = await mysql.createConnection(SERVER_URLS.mysql);
      try {
        for (const [mode, strict] of [
          ["", "STRICT_TRANS_TABLES"],
          ["ANSI_QUOTES", "ANSI_QUOTES,STRICT_TRANS_TABLES"],
        ]) {
          await connection.query(`SET SESSION sql_mode = '${mode}'`);
          await connection.query(STRICT_SESSION);
          const [rows] = (await connection.query(
            "SELECT @@SESSION.sql_mode AS mode",
          )) as unknown as [{ mode: string }[]];
          expect(rows[0]?.mode).toBe(strict);
        }
      } finally {
        await connection.end();
      }
      const { url } = await freshDatabase();
      expect(() => new MysqlEventStore({ uri: `${url}?resetOnRelease=true` })).toThrow(
        expect.objectContaining({ code: "invalid-argument", path: "$.uri" }),
      );
    });
  },
);

describe.skipIf(!available)("MysqlEventStore on InnoDB tables of utf8mb4 text", () => {
  it("stores any text as given, reports the engine and innodb_flush_log_at_trx_commit, and opens again for a user who may only read", async () => {
    const { database, url } = await freshDatabase("CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
    const store = new MysqlEventStore({ uri: url });
    await store.init();
    const [flush] = (await (admin as mysql.Connection).query(
      "SELECT @@innodb_flush_log_at_trx_commit AS flush",
    )) as unknown as [{ flush: number }[]];
    expect(store.describe().durability).toMatchObject({
      database,
      engine: "InnoDB",
      innodb_flush_log_at_trx_commit: Number(flush[0]?.flush),
    });
    await store.append({
      sessionId: "s-🚀",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", payload: text }],
    });
    expect((await store.readRun({ sessionId: "s-🚀", runId: "r" })).events[0]?.payload).toEqual(
      text,
    );
    expect(await verifyRun(store, { sessionId: "s-🚀", runId: "r" })).toMatchObject({ ok: true });
    await store.close();
    expect((await tables(database)).every((table) => table.engine === "InnoDB")).toBe(true);

    // The checks read information_schema only: SELECT on the ledger is enough to open it.
    const reader = `ledger_storage_ro_${uuidv7().replaceAll("-", "").slice(-12)}`;
    users.push(reader);
    await admin?.query(`CREATE USER '${reader}'@'%' IDENTIFIED BY 'reader-pw'`);
    await admin?.query(`GRANT SELECT ON \`${database}\`.* TO '${reader}'@'%'`);
    const readerUrl = new URL(url);
    readerUrl.username = reader;
    readerUrl.password = "reader-pw";
    const readOnly = new MysqlEventStore({ uri: readerUrl.toString() });
    await readOnly.init({ create: false });
    expect((await readOnly.readRun({ sessionId: "s-🚀", runId: "r" })).events[0]?.payload).toEqual(
      text,
    );
    await readOnly.close();
  });
});
