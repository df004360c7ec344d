import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { MysqlEventStore } from "../stores/mysql/mysql-store.js";
import { PostgresEventStore } from "../stores/postgres/postgres-store.js";
import { RedisEventStore } from "../stores/redis/redis-store.js";
import { openStore } from "./open-store.js";

// Values in a store URL the store reads itself, refused before anything connects when they
// cannot mean what was meant (no server is reached: the hosts below do not exist).

describe("store URL values", () => {
  it("a PostgreSQL connect_timeout or query_timeout that is not a whole number is refused, as timeoutMs is", async () => {
    // connect_timeout=abc read as NaN left connecting bounded by the store's default alone,
    // without a word, where ?timeoutMs=abc was refused.
    for (const query of ["connect_timeout=abc", "connect_timeout=1.5", "query_timeout=ten"]) {
      const url = `postgres://app@db.internal:5432/ledger?${query}`;
      const name = query.slice(0, query.indexOf("="));
      await expect(openStore(url, { init: false })).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
        message: expect.stringContaining(name),
      });
      expect(() => new PostgresEventStore({ connectionString: url })).toThrow(
        expect.objectContaining({ code: "invalid-argument", path: "$.connectionString" }),
      );
    }
    for (const query of ["connect_timeout=0", "connect_timeout=10", "query_timeout=5000"]) {
      const store = await openStore(`postgres://app@db.internal:5432/ledger?${query}`, {
        init: false,
      });
      await store.close();
    }
  });

  it("a server or driver bound in the URL that is not a whole number in range is refused, naming it", async () => {
    // Each was passed on unchecked: node-postgres sent statement_timeout=abc to the server as
    // "NaN" and 10s as 10 ms, mysql2 and ioredis ran a negative or too long timer after 1 ms;
    // the connect or every command then failed as store-unavailable, an outage to wait out.
    const refused: [url: string, store: () => unknown, path: string][] = [
      ...[
        "statement_timeout=abc",
        "statement_timeout=-5",
        "statement_timeout=10s",
        "lock_timeout=1.5",
        "idle_in_transaction_session_timeout=-1",
        "connect_timeout=9999999",
        "query_timeout=3000000000",
      ].map((query): [string, () => unknown, string] => {
        const url = `postgres://app@db.internal:5432/ledger?${query}`;
        return [url, () => new PostgresEventStore({ connectionString: url }), "$.connectionString"];
      }),
      ...["connectTimeout=-5", "connectTimeout=abc", "idleTimeout=soon"].map(
        (query): [string, () => unknown, string] => {
          const url = `mysql://app@db.internal:3306/ledger?${query}`;
          return [url, () => new MysqlEventStore({ uri: url }), "$.uri"];
        },
      ),
      ...["socketTimeout=9999999999", "commandTimeout=2147483648", "connectTimeout=0"].map(
        (query): [string, () => unknown, string] => {
          const url = `redis://cache.internal:6379?${query}`;
          return [url, () => new RedisEventStore({ url }), "$.url"];
        },
      ),
    ];
    for (const [url, store, path] of refused) {
      const name = url.slice(url.indexOf("?") + 1, url.lastIndexOf("="));
      await expect(openStore(url, { init: false }), url).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
        message: expect.stringContaining(`${name}=`),
        details: { param: name },
      });
      expect(store, url).toThrow(expect.objectContaining({ code: "invalid-argument", path }));
    }
    for (const url of [
      "postgres://app@db.internal:5432/ledger?statement_timeout=0&lock_timeout=2147483647",
      "postgres://app@db.internal:5432/ledger?idle_in_transaction_session_timeout=60000&connect_timeout=2147483",
      "mysql://app@db.internal:3306/ledger?connectTimeout=10000&idleTimeout=0",
      "redis://cache.internal:6379?socketTimeout=2147483647&commandTimeout=1",
    ]) {
      const store = await openStore(url, { init: false });
      await store.close();
    }
  });

  it("a Redis family or a mysql2 count in the URL that the driver cannot use as meant is refused, naming it", async () => {
    // Each was passed on unchecked: ioredis read ?family=abc as the string "abc" (every connect
    // to a host name failed, as store-unavailable) and ?family=4x as 4; mysql2 read ?connectionLimit=ten
    // as its default of 10 without a word, and ?connectionLimit=-5 (or 0) as a pool that never
    // opens a connection, where every statement waited for one.
    const refused: [url: string, store: () => unknown, path: string][] = [
      ...["family=abc", "family=4x", "family=5", "family=-4"].map(
        (query): [string, () => unknown, string] => {
          const url = `redis://cache.internal:6379?${query}`;
          return [url, () => new RedisEventStore({ url }), "$.url"];
        },
      ),
      ...[
        "connectionLimit=ten",
        "connectionLimit=-5",
        "connectionLimit=0",
        "maxIdle=many",
        "queueLimit=-1",
        "maxPreparedStatements=0",
        "keepAliveInitialDelay=1.5",
      ].map((query): [string, () => unknown, string] => {
        const url = `mysql://app@db.internal:3306/ledger?${query}`;
        return [url, () => new MysqlEventStore({ uri: url }), "$.uri"];
      }),
    ];
    for (const [url, store, path] of refused) {
      const name = url.slice(url.indexOf("?") + 1, url.lastIndexOf("="));
      await expect(openStore(url, { init: false }), url).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
        message: expect.stringContaining(`${name}=`),
        details: { param: name },
      });
      expect(store, url).toThrow(expect.objectContaining({ code: "invalid-argument", path }));
    }
    for (const url of [
      "redis://cache.internal:6379?family=0",
      "redis://cache.internal:6379?family=4",
      "redis://cache.internal:6379?family=6",
      "mysql://app@db.internal:3306/ledger?connectionLimit=20&maxIdle=0&queueLimit=0&maxPreparedStatements=100&keepAliveInitialDelay=0",
    ]) {
      const store = await openStore(url, { init: false });
      await store.close();
    }
  });

  it("an empty Redis key prefix is refused: the ledger's keys would sit at the top of the database", async () => {
    await expect(
      openStore("redis://cache.internal:6379?keyPrefix=", { init: false }),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.url" });
    expect(
      () => new RedisEventStore({ url: "redis://cache.internal:6379", keyPrefix: "" }),
    ).toThrow(expect.objectContaining({ code: "invalid-argument", path: "$.keyPrefix" }));
    // A client that prefixes every key itself keeps the ledger under its prefix.
    const prefixed = new Redis({ lazyConnect: true, keyPrefix: "app:" });
    const bare = new Redis({ lazyConnect: true });
    try {
      await new RedisEventStore({ client: prefixed, keyPrefix: "" }).close();
      expect(() => new RedisEventStore({ client: bare, keyPrefix: "" })).toThrow(
        expect.objectContaining({ code: "invalid-argument", path: "$.keyPrefix" }),
      );
    } finally {
      prefixed.disconnect();
      bare.disconnect();
    }
  });

  it("an unknown scheme's refusal lists every scheme openStore takes", async () => {
    const error = await openStore("mongodb://db.internal/ledger").catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.url" });
    for (const scheme of [
      "postgres://",
      "postgresql://",
      "mysql://",
      "mariadb://",
      "redis://",
      "rediss://",
    ])
      expect((error as Error).message).toContain(scheme);
  });
});
