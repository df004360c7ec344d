import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import {
  type BlackHoleProxy,
  serverAddress,
  startBlackHoleProxy,
} from "../sql/testing/black-hole-proxy.js";
import { expectBoundedAppend, expectRecorderRidesOut } from "../sql/testing/silent-server.js";
import { RedisEventStore } from "./redis-store.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

// A server that stops answering without closing the connection (a partition, a failover, a
// firewall dropping packets): every command of a store made from a URL is bounded.

const available = await serverAvailable("redis");
const prefix = freshPrefix("timeout");
const TIMEOUT_MS = 600;
let proxy: BlackHoleProxy;
const closing: { close(): Promise<void> }[] = [];

function url(params: string): string {
  const through = new URL(proxy.url(SERVER_URLS.redis));
  through.search = `?keyPrefix=${encodeURIComponent(prefix)}&${params}`;
  return through.toString();
}

describe.skipIf(!available)("RedisEventStore when the server goes silent", () => {
  beforeAll(async () => {
    proxy = await startBlackHoleProxy(serverAddress(SERVER_URLS.redis, 6379));
  });
  afterAll(async () => {
    for (const store of closing) await store.close();
    await proxy?.close();
    await deleteKeys(SERVER_URLS.redis, prefix);
  });

  async function urlStore(params: string): Promise<RedisEventStore> {
    const store = new RedisEventStore({ url: url(params) });
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
    expect(error.message).toMatch(
      /redis append failed: no reply from the server within 600 ms: the connection was dropped \(the append may or may not have been applied/,
    );
  }, 20_000);

  it("an append that ran and lost its reply is unknown, and its retry is deduplicated", async () => {
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}`);
    const { retried } = await expectBoundedAppend({
      store,
      proxy,
      timeoutMs: TIMEOUT_MS,
      mode: "replies-lost",
    });
    expect(retried.deduplicated).toBe(true);
  }, 20_000);

  it("a recorder's call rides out a silence shorter than its retries", async () => {
    const store = await urlStore(`timeoutMs=${TIMEOUT_MS}`);
    await expectRecorderRidesOut({ store, proxy, openAfterMs: TIMEOUT_MS * 1.2 });
  }, 20_000);

  it("connecting to a server that accepts and never answers is bounded too (init)", async () => {
    proxy.setMode("silent");
    try {
      const store = new RedisEventStore({ url: url(`timeoutMs=${TIMEOUT_MS}`) });
      closing.push(store);
      const started = Date.now();
      await expect(store.init()).rejects.toMatchObject({
        code: "store-unavailable",
        message: expect.stringMatching(
          /^redis init failed: no reply from the server within 600 ms/,
        ),
      });
      expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1_500);
    } finally {
      proxy.setMode("open");
    }
  }, 20_000);

  it("ioredis' own socketTimeout in the URL is read as a number and bounds each reply", async () => {
    const store = await urlStore("socketTimeout=500");
    await expectBoundedAppend({ store, proxy, timeoutMs: 500, mode: "silent" });
  }, 20_000);

  it("refuses timeoutMs with a client of the application's own, whose settings are its own", () => {
    const client = new Redis(SERVER_URLS.redis, { lazyConnect: true });
    try {
      expect(() => new RedisEventStore({ client, timeoutMs: 1000 })).toThrow(
        /\$\.timeoutMs: .*socketTimeout and connectTimeout/,
      );
    } finally {
      client.disconnect();
    }
  });
});
