import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import {
  readRightAfter,
  readsSucceedAfterKill,
  refusedOrLateSentOnce,
} from "../sql/testing/read-retry-scenario.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const { database, url, create } = freshPlaces(afterAll).database("read_retry");
let admin: mysql.Connection | undefined;

/**
 * `read`, sent right after the server ended every connection to the test database (KILL
 * CONNECTION) and before the store's driver has read a byte of it (`readRightAfter`).
 */
async function readRightAfterKill<T>(read: () => Promise<T>): Promise<T> {
  const connection = admin as mysql.Connection;
  const [rows] = (await connection.query(
    "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()",
    [database],
  )) as unknown as [{ id: number }[]];
  expect(rows.length).toBeGreaterThanOrEqual(1);
  // One statement list, one round trip: the server ends them all while the loop is held (a
  // KILL answers before its connection is closed, and a second KILL sent after the first's
  // answer could end a connection the read is already on).
  const kills = connection.query(rows.map(({ id }) => `KILL CONNECTION ${Number(id)};`).join(""));
  return readRightAfter(kills, read);
}

describe.skipIf(!available)("MysqlEventStore reads after the server ended its connections", () => {
  beforeAll(async () => {
    admin = await mysql.createConnection({ uri: SERVER_URLS.mysql, multipleStatements: true });
    await create();
  });
  afterAll(async () => {
    await admin?.end();
  });

  it("a resume right after sends its reads again on new connections, and resumes", async () => {
    await readsSucceedAfterKill(new MysqlEventStore({ uri: url }), readRightAfterKill, {
      pooled: true,
    });
  });

  it("a statement the server refuses, or a wait past the store's bound, is not sent again", async () => {
    const pool = mysql.createPool({ uri: url, connectionLimit: 2 });
    const store = new MysqlEventStore({ pool, timeoutMs: 500 });
    let sent = 0;
    pool.on("acquire", () => sent++);
    const holder = await mysql.createConnection(url);
    try {
      await refusedOrLateSentOnce({
        store,
        timeoutMs: 500,
        sessionId: "s",
        sends: { reset: () => (sent = 0), count: () => sent },
        // An operator renamed the table: every read of it fails the same way.
        refuse: async () => {
          await admin?.query(`RENAME TABLE \`${database}\`.events TO \`${database}\`.gone`);
        },
        refusedBy: (error) => expect((error as Error).cause).toMatchObject({ errno: 1146 }),
        // A lock held past the bound.
        holdPastBound: async () => {
          await holder.query("LOCK TABLES runs WRITE");
        },
        release: async () => {
          await holder.query("UNLOCK TABLES");
        },
      });
    } finally {
      await holder.end();
      await store.close();
      await pool.end();
    }
  });
});
