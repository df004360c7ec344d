import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { openStore } from "../store/open-store.js";
import { MysqlEventStore } from "./mysql/mysql-store.js";
import { ownedPoolSettings } from "./mysql/pool-config.js";
import { ownedPoolConfig } from "./postgres/bounded-pool.js";
import { PostgresEventStore } from "./postgres/postgres-store.js";
import { ownedClientOptions } from "./redis/client.js";
import { openClient } from "./redis/open-client.js";
import { RedisEventStore } from "./redis/redis-store.js";
import {
  checkTimeoutMs,
  DEFAULT_TIMEOUT_MS,
  storeTimeoutMs,
  takeTimeoutParam,
  withinBound,
} from "./server-timeout.js";

// No server needed: the bounds a store gives its driver, and the values it refuses.

describe("timeoutMs", () => {
  it("is a whole number of milliseconds, 0 meaning no bound of the store's", () => {
    expect(checkTimeoutMs("$.timeoutMs", 0)).toBe(0);
    expect(checkTimeoutMs("$.timeoutMs", 30_000)).toBe(30_000);
    for (const bad of [-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31, "5000", null])
      expect(() => checkTimeoutMs("$.timeoutMs", bad), String(bad)).toThrow(
        /\$\.timeoutMs: timeoutMs is a whole number of milliseconds/,
      );
  });

  it("is read from a URL and taken out of it", () => {
    const url = new URL("postgres://h/db?timeoutMs=5000&application_name=x");
    expect(takeTimeoutParam(url, "$.url")).toBe(5000);
    expect(url.search).toBe("?application_name=x");
    expect(takeTimeoutParam(new URL("redis://h"), "$.url")).toBeUndefined();
    for (const bad of ["", "5s", "-1", "1e3", "99999999999"])
      expect(() => takeTimeoutParam(new URL(`redis://h?timeoutMs=${bad}`), "$.url"), bad).toThrow(
        LedgerError,
      );
  });

  it("defaults to 30 s for a client the store makes, and to none for the application's", () => {
    expect(DEFAULT_TIMEOUT_MS).toBe(30_000);
    expect(storeTimeoutMs({ option: undefined, fromUrl: undefined, owned: true })).toBe(30_000);
    expect(storeTimeoutMs({ option: undefined, fromUrl: 800, owned: true })).toBe(800);
    expect(storeTimeoutMs({ option: 500, fromUrl: 800, owned: true })).toBe(500);
    expect(storeTimeoutMs({ option: undefined, fromUrl: undefined, owned: false })).toBeUndefined();
    expect(storeTimeoutMs({ option: 500, fromUrl: undefined, owned: false })).toBe(500);
  });

  it("a bounded wait ends the waiter and fails with the bound; none when 0", async () => {
    let expired = 0;
    const started = Date.now();
    await expect(
      withinBound({
        wait: new Promise(() => {}),
        timeoutMs: 50,
        what: "reply",
        expire: () => expired++,
      }),
    ).rejects.toMatchObject({
      code: "ETIMEDOUT",
      timeoutMs: 50,
      message: "no reply from the server within 50 ms (timeoutMs)",
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    expect(expired).toBe(1);
    await expect(
      withinBound({ wait: Promise.resolve(7), timeoutMs: 0, what: "reply", expire: () => {} }),
    ).resolves.toBe(7);
  });
});

describe("the bounds a store made from a URL gives its driver", () => {
  it("PostgreSQL: connectionTimeoutMillis and query_timeout; the URL's own keep their meaning", () => {
    expect(ownedPoolConfig("postgres://h/db", 30_000)).toEqual({
      config: {
        connectionString: "postgres://h/db",
        connectionTimeoutMillis: 30_000,
        query_timeout: 30_000,
      },
      bounds: { connect: 30_000, query: 30_000 },
    });
    // libpq's connect_timeout (s), which node-postgres reads only for its native binding.
    expect(ownedPoolConfig("postgres://h/db?connect_timeout=2", 30_000).config).toMatchObject({
      connectionTimeoutMillis: 2_000,
    });
    // node-postgres' query_timeout in the string wins over the option: the store says so.
    expect(ownedPoolConfig("postgres://h/db?query_timeout=2000", 30_000).bounds.query).toBe(2_000);
    expect(ownedPoolConfig("postgres://h/db", 0)).toEqual({
      config: { connectionString: "postgres://h/db" },
      bounds: {},
    });
  });

  it("MySQL: connectTimeout unless the URI has its own, and no ?timeoutMs= for mysql2", () => {
    expect(ownedPoolSettings("mariadb://u@h/db?timeoutMs=900", undefined)).toEqual({
      uri: "mysql://u@h/db",
      timeoutMs: 900,
      connectTimeoutMs: 900,
      connectTimeout: { connectTimeout: 900 },
    });
    expect(ownedPoolSettings("mysql://u@h/db", undefined)).toMatchObject({
      uri: "mysql://u@h/db",
      timeoutMs: 30_000,
      connectTimeout: { connectTimeout: 30_000 },
    });
    expect(ownedPoolSettings("mysql://u@h/db?connectTimeout=5000", 700)).toMatchObject({
      timeoutMs: 700,
      connectTimeoutMs: 5_000,
      connectTimeout: {},
    });
  });

  it("Redis: connectTimeout and socketTimeout; ioredis' own URL parameters read as numbers", () => {
    expect(ownedClientOptions(30_000, {})).toMatchObject({
      connectTimeout: 30_000,
      socketTimeout: 30_000,
      maxRetriesPerRequest: 0,
    });
    const { client } = openClient({
      url: "redis://127.0.0.1:6379/3?timeoutMs=800&commandTimeout=2000&keyPrefix=app:",
    });
    try {
      expect(client.options).toMatchObject({
        connectTimeout: 800,
        socketTimeout: 800,
        commandTimeout: 2_000,
        db: 3,
        lazyConnect: true,
      });
    } finally {
      client.disconnect();
    }
    const defaults = openClient({ url: "redis://127.0.0.1:6379" }).client;
    expect(defaults.options).toMatchObject({ connectTimeout: 30_000, socketTimeout: 30_000 });
    defaults.disconnect();
  });
});

describe("a bound that cannot be used is refused before anything connects", () => {
  it("in a store URL, named as the URL", async () => {
    for (const url of [
      "postgres://u@127.0.0.1:1/db?timeoutMs=soon",
      "mysql://u@127.0.0.1:1/db?timeoutMs=-5",
      "redis://127.0.0.1:1?timeoutMs=1.5",
      "redis://127.0.0.1:1?socketTimeout=0",
    ])
      await expect(openStore(url), url).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
      });
  });

  it("as an option", async () => {
    await expect(
      async () =>
        new PostgresEventStore({ connectionString: "postgres://u@127.0.0.1:1/db", timeoutMs: -1 }),
    ).rejects.toMatchObject({ path: "$.timeoutMs" });
    await expect(
      async () => new MysqlEventStore({ uri: "mysql://u@127.0.0.1:1/db", timeoutMs: 0.5 }),
    ).rejects.toMatchObject({ path: "$.timeoutMs" });
    await expect(
      async () => new RedisEventStore({ url: "redis://127.0.0.1:1", timeoutMs: Number.NaN }),
    ).rejects.toMatchObject({ path: "$.timeoutMs" });
  });
});
