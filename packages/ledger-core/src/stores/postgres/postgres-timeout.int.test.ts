import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import {
  type BlackHoleProxy,
  serverAddress,
  startBlackHoleProxy,
} from "../sql/testing/black-hole-proxy.js";
import { expectBoundedAppend, expectRecorderRidesOut } from "../sql/testing/silent-server.js";
import { PostgresEventStore } from "./postgres-store.js";

// A server that stops answering without closing the connection (a partition, a failover, a
// firewall dropping packets): every wait of the store is bounded by its timeoutMs.

const available = await serverAvailable("postgres");
const schema = `ledger_timeout_${uuidv7().replaceAll("-", "")}`;
const TIMEOUT_MS = 600;
let proxy: BlackHoleProxy;
const closing: { close(): Promise<void> }[] = [];

function url(params: string): string {
  const through = new URL(proxy.url(SERVER_URLS.postgres));
  through.search = `?schema=${schema}&${params}`;
  return through.toString();
}

describe.skipIf(!available)("PostgresEventStore when the server goes silent", () => {
  beforeAll(async () => {
    proxy = await startBlackHoleProxy(serverAddress(SERVER_URLS.postgres, 5432));
  });
  afterAll(async () => {
    for (const store of closing) await store.close();
    await proxy?.close();
    const admin = new pg.Client({ connectionString: SERVER_URLS.postgres });
    await admin.connect();
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}_m" CASCADE`);
    await admin.end();
  });

  async function urlStore(params: string): Promise<PostgresEventStore> {
    const store = new PostgresEventStore({ connectionString: url(params) });
    closing.push(store);
    await store.init();
    return store;
  }

  it("a URL's ?timeoutMs= bounds an append whose request is lost; the retry writes it once", async () => {
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}`);
    await expectBoundedAppend({ store, proxy, timeoutMs: TIMEOUT_MS, mode: "silent" });
  }, 20_000);

  it("an append that committed and lost its reply is unknown, and its retry is deduplicated", async () => {
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}`);
    const { error, retried } = await expectBoundedAppend({
      store,
      proxy,
      timeoutMs: TIMEOUT_MS,
      mode: "replies-lost",
    });
    expect(error.message).toMatch(/append failed: no reply from the server within 600 ms/);
    // The one-statement append ran on the server: the retry finds it there.
    expect(retried.deduplicated).toBe(true);
  }, 20_000);

  it("a recorder's call rides out a silence shorter than its retries", async () => {
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}`);
    await expectRecorderRidesOut({ store, proxy, openAfterMs: TIMEOUT_MS * 1.2 });
  }, 20_000);

  it("connecting to a server that accepts and never answers is bounded too (init)", async () => {
    proxy.setMode("silent");
    try {
      const store = new PostgresEventStore({
        connectionString: url(`timeoutMs=${TIMEOUT_MS}`),
      });
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

  it("libpq's connect_timeout in the URL bounds connecting (node-postgres alone ignores it)", async () => {
    proxy.setMode("silent");
    try {
      const store = new PostgresEventStore({ connectionString: url("connect_timeout=1") });
      closing.push(store);
      const started = Date.now();
      await expect(store.init()).rejects.toMatchObject({ code: "store-unavailable" });
      expect(Date.now() - started).toBeLessThan(1_000 + 1_500);
    } finally {
      proxy.setMode("open");
    }
  }, 20_000);

  it("init waits longer than the bound for another process's migration (a wait on purpose)", async () => {
    const other = new pg.Client({ connectionString: SERVER_URLS.postgres });
    await other.connect();
    await other.query("BEGIN");
    await other.query("SELECT pg_advisory_xact_lock(hashtext($1))", [
      `agent-ledger:migrate:${schema}_m`,
    ]);
    const released = setTimeout(() => void other.query("COMMIT"), TIMEOUT_MS * 3);
    try {
      const store = new PostgresEventStore({
        connectionString: SERVER_URLS.postgres,
        schema: `${schema}_m`,
        timeoutMs: TIMEOUT_MS,
      });
      closing.push(store);
      const started = Date.now();
      await store.init();
      expect(Date.now() - started).toBeGreaterThanOrEqual(TIMEOUT_MS * 3 - 50);
    } finally {
      clearTimeout(released);
      await other.end();
    }
  }, 20_000);

  it("bounds the store's own waits on an application's pool with the timeoutMs option", async () => {
    const pool = new pg.Pool({ connectionString: proxy.url(SERVER_URLS.postgres) });
    pool.on("error", () => {});
    const store = new PostgresEventStore({ pool, schema, timeoutMs: TIMEOUT_MS });
    await store.init();
    try {
      await expectBoundedAppend({ store, proxy, timeoutMs: TIMEOUT_MS, mode: "silent" });
    } finally {
      await store.close();
      await pool.end();
    }
  }, 20_000);
});
