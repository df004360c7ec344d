import { Cluster, Redis, type RedisOptions } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { openStore } from "../../store/open-store.js";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { RedisEventStore } from "./redis-store.js";
import { localClusterForTests } from "./testing/cluster-hooks.js";
import { localClusterUnavailable, startLocalRedis } from "./testing/local-cluster.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

// The store on ioredis clients configured the way applications configure them for their own
// commands.

const available = await serverAvailable("redis");
const noCluster = await localClusterUnavailable();
const APP_DB = 7;
const prefixes: { url: string; prefix: string }[] = [];
const clients: Redis[] = [];

afterAll(async () => {
  for (const client of clients) client.disconnect();
  for (const { url, prefix } of prefixes) await deleteKeys(url, prefix);
});

function appClient(options: RedisOptions): Redis {
  const client = new Redis(SERVER_URLS.redis, {
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    ...options,
  });
  client.on("error", () => {});
  clients.push(client);
  return client;
}

/** The server's URL on database `db`, for cleaning up keys the client wrote there. */
function urlOf(db: number): string {
  const url = new URL(SERVER_URLS.redis);
  url.pathname = `/${db}`;
  return url.toString();
}

describe.skipIf(!available)("RedisEventStore on a server older than 5.0", () => {
  it("init refuses it with the version it needs, and writes nothing", async () => {
    const keyPrefix = freshPrefix("old");
    prefixes.push({ url: SERVER_URLS.redis, prefix: keyPrefix });
    const client = appClient({});
    // What a Redis 4 server answers (this machine runs a newer one).
    const info = client.info.bind(client);
    client.info = (async (...args: Parameters<typeof info>) =>
      String(await info(...args)).replace(/redis_version:\S+/, "redis_version:4.0.14")) as never;
    const store = new RedisEventStore({ client, keyPrefix });
    await expect(store.init()).rejects.toMatchObject({
      code: "store-unavailable",
      message: expect.stringContaining("version 4.0.14; agent-ledger needs Redis 5.0 or later"),
    });
    const plain = appClient({});
    expect(await plain.keys(`${keyPrefix}*`)).toEqual([]);
  });
});

// A server of its own (started from the machine's redis-server, which the cluster tests need
// too): the shared server's eviction settings must not change under the other tests.
describe.skipIf(noCluster !== undefined)("RedisEventStore on a server that evicts keys", () => {
  it("init refuses a memory limit with an allkeys policy, writing nothing; volatile policies and no limit pass", async () => {
    const server = await startLocalRedis([
      "--maxmemory",
      "64mb",
      "--maxmemory-policy",
      "allkeys-lru",
    ]);
    const admin = new Redis(server.url);
    const open = async () => {
      const store = new RedisEventStore({ url: server.url, keyPrefix: "ledger:" });
      try {
        await store.init();
        return store;
      } catch (error) {
        await store.close();
        throw error;
      }
    };
    try {
      await expect(open()).rejects.toMatchObject({
        code: "store-unavailable",
        message: expect.stringMatching(
          /maxmemory 67108864, maxmemory-policy allkeys-lru.*noeviction/,
        ),
      });
      expect(await admin.dbsize()).toBe(0);
      // The ledger's keys carry no TTL: a volatile policy never picks them.
      await admin.config("SET", "maxmemory-policy", "volatile-lru");
      const store = await open();
      expect(store.describe().durability).toMatchObject({
        maxmemory: "67108864",
        "maxmemory-policy": "volatile-lru",
      });
      await store.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      await store.close();
      // No limit: nothing is evicted, whatever the policy.
      await admin.config("SET", "maxmemory-policy", "allkeys-lfu");
      await admin.config("SET", "maxmemory", "0");
      await (await open()).close();
    } finally {
      admin.disconnect();
      await server.stop();
    }
  }, 30_000);
});

describe.skipIf(!available)("RedisEventStore on an application's client", () => {
  describe("its own keyPrefix, auto-pipelining, string numbers, another database", () => {
    const appPrefix = freshPrefix("app");
    const client = available
      ? appClient({
          keyPrefix: appPrefix,
          enableAutoPipelining: true,
          stringNumbers: true,
          db: APP_DB,
        })
      : undefined;
    prefixes.push({ url: urlOf(APP_DB), prefix: appPrefix });
    runEventStoreConformance(
      () => new RedisEventStore({ client: client as Redis, keyPrefix: freshPrefix("conf") }),
      { describe, it },
    );
  });

  it("describes a location whose keyPrefix finds the keys under the client's own prefix too", async () => {
    const appPrefix = freshPrefix("app");
    const prefix = freshPrefix("where");
    prefixes.push({ url: urlOf(APP_DB), prefix: appPrefix });
    const store = new RedisEventStore({
      client: appClient({ keyPrefix: appPrefix, db: APP_DB }),
      keyPrefix: prefix,
    });
    await store.init();
    await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", payload: {} }],
    });
    const where = store.describe().location as string;
    const location = new URL(where);
    expect(location.searchParams.get("keyPrefix")).toBe(`${appPrefix}${prefix}`);
    expect(location.pathname).toBe(`/${APP_DB}`);
    // The location, opened as a URL, is the same ledger.
    const reopened = await openStore(where, { create: false });
    try {
      expect((await reopened.readRun({ sessionId: "s", runId: "r" })).events).toHaveLength(1);
    } finally {
      await reopened.close();
    }
  });

  describe("a client made with lazyConnect, not yet connected when the store is made", () => {
    runEventStoreConformance(
      () => {
        const prefix = freshPrefix("lazy");
        prefixes.push({ url: SERVER_URLS.redis, prefix });
        return new RedisEventStore({ client: appClient({ lazyConnect: true }), keyPrefix: prefix });
      },
      { describe, it },
    );
  });
});

describe.skipIf(!available)("RedisEventStore upgrading through an application's client", () => {
  it("moves a layout-1 database's blobs when the client has its own keyPrefix (SCAN's keys carry it)", async () => {
    const appPrefix = freshPrefix("app");
    const legacy = freshPrefix("legacy");
    prefixes.push({ url: SERVER_URLS.redis, prefix: appPrefix });
    const client = appClient({ keyPrefix: appPrefix });
    const admin = appClient({});
    const writer = new RedisEventStore({ client, keyPrefix: legacy });
    await writer.init();
    const ref = await writer.putBlob("evidence kept across the upgrade");
    await writer.append({
      sessionId: "old",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started", evidenceRefs: [ref] }],
    });
    // Rewrite the blob's keys as version 1 kept them (as the server names them: with both
    // prefixes).
    const hex = ref.slice(7);
    const at = `${appPrefix}${legacy}`;
    const base = `${at}blob:{${hex}}`;
    const content = (await admin.getBuffer(base)) as Buffer;
    const touched = (await admin.get(`${base}:touched`)) as string;
    const sessions = await admin.smembers(`${base}:sessions`);
    await admin.del(base, `${base}:touched`, `${base}:sessions`);
    await admin.set(`${at}blob:${hex}`, content);
    await admin.zadd(`${at}blob-touched`, touched, hex);
    await admin.sadd(`${at}blob-sessions:${hex}`, ...sessions);
    await admin.set(`${at}schema-version`, "1");

    const upgraded = new RedisEventStore({ client, keyPrefix: legacy });
    await upgraded.init();
    expect(await admin.get(`${at}schema-version`)).toBe("3");
    expect(new TextDecoder().decode(await upgraded.getBlob(ref))).toBe(
      "evidence kept across the upgrade",
    );
    expect(await admin.exists(`${at}blob:${hex}`, `${at}blob-sessions:${hex}`)).toBe(0);
    expect(await admin.smembers(`${base}:sessions`)).toEqual(sessions);
  });
});

describe.skipIf(noCluster !== undefined)(
  "RedisEventStore on an application's Cluster client",
  () => {
    const local = localClusterForTests();
    let client: Cluster | undefined;
    afterAll(() => client?.disconnect());
    // The application's Cluster client: its own keyPrefix and auto-pipelining.
    runEventStoreConformance(
      () => {
        client ??= new Cluster(local.cluster().nodes, {
          keyPrefix: freshPrefix("app"),
          enableAutoPipelining: true,
          redisOptions: { maxRetriesPerRequest: 1 },
        });
        return new RedisEventStore({ client, keyPrefix: freshPrefix("cluster") });
      },
      { describe, it },
    );
  },
);

describe("RedisEventStore given a Cluster client that reads from replicas", () => {
  it("refuses scaleReads other than master at construction (a read could miss an acknowledged append)", async () => {
    for (const scaleReads of ["slave", "all", () => null] as const) {
      const cluster = new Cluster([{ host: "127.0.0.1", port: 1 }], {
        lazyConnect: true,
        scaleReads: scaleReads as "slave",
      });
      try {
        expect(() => new RedisEventStore({ client: cluster })).toThrow(
          expect.objectContaining({ code: "invalid-argument", path: "$.client" }),
        );
      } finally {
        cluster.disconnect();
      }
    }
    const master = new Cluster([{ host: "127.0.0.1", port: 1 }], { lazyConnect: true });
    expect(() => new RedisEventStore({ client: master })).not.toThrow();
    master.disconnect();
  });
});
