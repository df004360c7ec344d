import { randomBytes } from "node:crypto";
import { inspect } from "node:util";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { openStore } from "../../store/open-store.js";
import { checkInitWithoutCreate } from "../../testing/init-without-create.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { RedisEventStore } from "./redis-store.js";
import { started } from "./testing/started-event.js";
import { redisStoreFile } from "./testing/store-file.js";
import { freshPrefix, keysUnder } from "./testing/test-keys.js";

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");

describe.skipIf(!available)("RedisEventStore", () => {
  const redis = redisStoreFile("store");

  it("init({ create: false }) writes no key where there is no ledger, and opens one that is there", async () => {
    const keyPrefix = freshPrefix("ro");
    redis.extraPrefixes.push(keyPrefix);
    await checkInitWithoutCreate({
      open: () => new RedisEventStore({ url, keyPrefix }),
      leftovers: async () => (await keysUnder(redis.admin, keyPrefix)).length,
    });
  });

  it("refuses a database the server does not have, writing nothing (ioredis would go on in database 0)", async () => {
    const keyPrefix = freshPrefix("no-db");
    redis.extraPrefixes.push(keyPrefix);
    const missing = new URL(url);
    missing.pathname = "/99";
    const stranded = new RedisEventStore({ url: missing.toString(), keyPrefix });
    try {
      const failure = await stranded.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      // The URL's to change, not a server to wait for.
      expect(failure).toMatchObject({ code: "invalid-argument", path: "$.url" });
      expect((failure as Error).message).toContain("/99");
    } finally {
      await stranded.close();
    }
    expect(await keysUnder(redis.admin, keyPrefix)).toEqual([]);
  });

  it("a password the server refuses stays out of the error, its cause included (which ioredis gives the AUTH command's arguments)", async () => {
    const secret = `pw-${randomBytes(6).toString("hex")}`;
    const refused = new URL(url);
    refused.username = "agent-ledger-no-such-user";
    refused.password = secret;
    const stranded = new RedisEventStore({
      url: refused.toString(),
      keyPrefix: freshPrefix("auth"),
    });
    try {
      const failure = await stranded.init().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toMatchObject({ code: "invalid-argument", path: "$.url" });
      expect((failure as Error).message).toContain("WRONGPASS");
      // What console.error(error) prints: the error, its cause and their properties.
      expect(inspect(failure, { depth: 10 })).not.toContain(secret);
    } finally {
      await stranded.close();
    }
  });

  it("describes itself: redis, URL without password and with its key prefix, the server's persistence and eviction", async () => {
    const setting = async (name: string) =>
      ((await redis.admin.config("GET", name)) as string[])[1] as string;
    expect(redis.store.describe()).toEqual({
      kind: "redis",
      location: `${url}?keyPrefix=${redis.prefix}`,
      durability: {
        appendonly: await setting("appendonly"),
        appendfsync: await setting("appendfsync"),
        maxmemory: await setting("maxmemory"),
        "maxmemory-policy": await setting("maxmemory-policy"),
      },
    });
    const secret = RedisEventStore.fromUrl("redis://user:s3cret@127.0.0.1:1/2");
    expect(secret.describe().location).not.toContain("s3cret");
    expect(secret.describe().location).toContain("127.0.0.1:1");
    await secret.close();
  });

  it("opens from openStore with the key prefix in the URL", async () => {
    const urlPrefix = freshPrefix("url");
    redis.extraPrefixes.push(urlPrefix);
    const opened = await openStore(`${url}/0?keyPrefix=${encodeURIComponent(urlPrefix)}`);
    expect(opened).toBeInstanceOf(RedisEventStore);
    expect(Object.values(opened.describe().durability ?? {})).not.toContain("unknown");
    await opened.append({ sessionId: "o", runId: "r", expectedSeq: 0, events: [started()] });
    await opened.close();
    const keys = await keysUnder(redis.admin, urlPrefix);
    expect(keys).toContain(`${urlPrefix}schema-version`);
    expect(keys.length).toBeGreaterThan(4);
  });

  it("uses a client the application made and leaves it open", async () => {
    const client = new Redis(url);
    const own = new RedisEventStore({ client, keyPrefix: redis.prefix });
    await own.init();
    await own.append({ sessionId: "byo", runId: "r", expectedSeq: 0, events: [started()] });
    expect(own.describe().location).toBe(`redis://127.0.0.1:6379/0?keyPrefix=${redis.prefix}`);
    await own.close();
    expect(await client.ping()).toBe("PONG");
    client.disconnect();
  });

  it("reports an unreachable server as store-unavailable with the driver error", async () => {
    const offline = new RedisEventStore({ url: "redis://127.0.0.1:1", keyPrefix: redis.prefix });
    const error = await offline
      .append({ sessionId: "s", runId: "r", expectedSeq: 0, events: [started()] })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "store-unavailable" });
    expect((error as Error).cause).toBeInstanceOf(Error);
    await expect(offline.readSession({ sessionId: "s" })).rejects.toMatchObject({
      code: "store-unavailable",
    });
    await offline.close();
  });

  it("rejects a key prefix with braces and options without exactly one of client or url", () => {
    expect(() => new RedisEventStore({ url, keyPrefix: "a{b}" })).toThrow(/keyPrefix/);
    expect(() => new RedisEventStore({})).toThrow(/exactly one/);
    expect(() => new RedisEventStore({ url: "http://x" })).toThrow(/redis:\/\//);
  });
});
