import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import {
  type BlackHoleProxy,
  serverAddress,
  startBlackHoleProxy,
} from "../sql/testing/black-hole-proxy.js";
import { expectBoundedAppend, expectRecorderRidesOut } from "../sql/testing/silent-server.js";
import { MysqlEventStore } from "./mysql-store.js";

// A server that stops answering without closing the connection (a partition, a failover, a
// firewall dropping packets): every wait of the store is bounded by its timeoutMs.

const available = await serverAvailable("mysql");
const database = `ledger_timeout_${uuidv7().replaceAll("-", "")}`;
const TIMEOUT_MS = 600;
let proxy: BlackHoleProxy;
let mariadb = false;
const closing: { close(): Promise<void> }[] = [];

function url(params: string): string {
  const through = new URL(proxy.url(SERVER_URLS.mysql));
  through.pathname = `/${database}`;
  through.search = `?${params}`;
  return through.toString();
}

describe.skipIf(!available)("MysqlEventStore when the server goes silent", () => {
  beforeAll(async () => {
    proxy = await startBlackHoleProxy(serverAddress(SERVER_URLS.mysql, 3306));
    const admin = await mysql.createConnection(SERVER_URLS.mysql);
    await admin.query(`CREATE DATABASE \`${database}\``);
    const [rows] = (await admin.query("SELECT VERSION() AS version")) as unknown as [
      { version: string }[],
    ];
    mariadb = /mariadb/i.test(rows[0]?.version ?? "");
    await admin.end();
  });
  afterAll(async () => {
    for (const store of closing) await store.close();
    await proxy?.close();
    const admin = await mysql.createConnection(SERVER_URLS.mysql);
    await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin.query(`DROP DATABASE IF EXISTS \`${database}_m\``);
    await admin.end();
  });

  async function urlStore(params: string): Promise<MysqlEventStore> {
    const store = new MysqlEventStore({ uri: url(params) });
    closing.push(store);
    await store.init();
    return store;
  }

  it("a URL's ?timeoutMs= bounds an append whose request is lost; the retry writes it once", async () => {
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}`);
    const { error } = await expectBoundedAppend({
      store,
      proxy,
      timeoutMs: TIMEOUT_MS,
      mode: "silent",
    });
    expect(error.message).toMatch(/append failed: no reply from the server within 600 ms/);
  }, 20_000);

  it("an append that committed and lost its reply is unknown, and its retry finds it", async () => {
    // One connection, on which a batch of this shape was run before: on MariaDB the append goes
    // out as one block already prepared, which the server runs while its reply is lost (on
    // MySQL, a transaction whose first reply is lost: nothing is written).
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}&connectionLimit=1`);
    const warm = `warm-${uuidv7()}`;
    await store.append({
      sessionId: warm,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    await store.append({
      sessionId: warm,
      runId: "r",
      expectedSeq: 1,
      events: [{ type: "model.requested" }, { type: "model.completed" }],
    });
    const { retried } = await expectBoundedAppend({
      store,
      proxy,
      timeoutMs: TIMEOUT_MS,
      mode: "replies-lost",
    });
    expect(retried.deduplicated).toBe(mariadb);
  }, 20_000);

  it("a recorder's call rides out a silence shorter than its retries", async () => {
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}`);
    await expectRecorderRidesOut({ store, proxy, openAfterMs: TIMEOUT_MS * 1.2 });
  }, 20_000);

  it("connecting to a server that accepts and never answers is bounded too (init)", async () => {
    proxy.setMode("silent");
    try {
      const store = new MysqlEventStore({ uri: url(`timeoutMs=${TIMEOUT_MS}`) });
      closing.push(store);
      const started = Date.now();
      await expect(store.init()).rejects.toMatchObject({
        code: "store-unavailable",
        message: expect.stringMatching(/no connection to the server within 600 ms/),
      });
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1_500);
    } finally {
      proxy.setMode("open");
    }
  }, 20_000);

  it("init waits longer than the bound for another process's migration (a wait on purpose)", async () => {
    const other = await mysql.createConnection(SERVER_URLS.mysql);
    await other.query(`CREATE DATABASE \`${database}_m\``);
    // The store's migration lock (init-database.ts), cut as MySQL's lock names are.
    const lock = `agent-ledger:migrate:${database}_m`.slice(0, 64);
    const [got] = (await other.query("SELECT GET_LOCK(?, 5) AS got", [lock])) as unknown as [
      { got: number }[],
    ];
    expect(got[0]?.got).toBe(1);
    const released = setTimeout(
      () => void other.query("SELECT RELEASE_LOCK(?)", [lock]),
      TIMEOUT_MS * 3,
    );
    try {
      const through = new URL(SERVER_URLS.mysql);
      through.pathname = `/${database}_m`;
      through.search = `?timeoutMs=${TIMEOUT_MS}`;
      const store = new MysqlEventStore({ uri: through.toString() });
      closing.push(store);
      const started = Date.now();
      await store.init();
      expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS * 3 - 50);
    } finally {
      clearTimeout(released);
      await other.end();
    }
  }, 20_000);

  it("bounds the store's statements on an application's pool with the timeoutMs option", async () => {
    const through = new URL(proxy.url(SERVER_URLS.mysql));
    through.pathname = `/${database}`;
    const pool = mysql.createPool({ uri: through.toString(), charset: "utf8mb4" });
    const store = new MysqlEventStore({ pool, timeoutMs: TIMEOUT_MS });
    await store.init();
    try {
      await expectBoundedAppend({ store, proxy, timeoutMs: TIMEOUT_MS, mode: "silent" });
    } finally {
      await store.close();
      await pool.end();
    }
  }, 20_000);
});
