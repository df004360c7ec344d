import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { MysqlEventStore } from "../stores/mysql/mysql-store.js";
import { MYSQL_URL_PARAMS } from "../stores/mysql/url-params.js";
import { PostgresEventStore } from "../stores/postgres/postgres-store.js";
import { RedisEventStore } from "../stores/redis/redis-store.js";
import { type OpenStoreOptions, openStore } from "./open-store.js";

import { redactUrl } from "./redact-url.js";

// URLs that no driver can use are refused before any connection is tried, with a code, the
// path of the option, and never the password (not in the message, nor in an attached cause).

const secret = "s3cr/t#pw";
const malformed = [
  `postgres://app:${secret}@db.internal:5432/ledger`,
  `mysql://app:${secret}@db.internal:3306/ledger`,
  `redis://app:${secret}@cache.internal:6379/0`,
];

/** The error `promise` rejects with, checked to be `invalid-argument` at `path`, password-free. */
async function refusal(promise: Promise<unknown>, path: string) {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toMatchObject({ code: "invalid-argument", path });
  const shown = inspect(error, { depth: 10 });
  expect(shown).not.toContain("s3cr");
  expect(shown).not.toContain("t#pw");
  return error as Error;
}

/**
 * The query parameters `cases` (each with the name it must be refused by) refused in `url`'s
 * URL by openStore (at `$.url`) and by the store's constructor (`construct`, at `path`), the
 * password kept out of the error. Returns each refusal's message with the parameter's name.
 */
async function unknownParamsRefused(
  cases: readonly (readonly [query: string, name: string])[],
  url: (query: string) => string,
  construct: (url: string) => unknown,
  path: string,
): Promise<{ name: string; message: string }[]> {
  const refusals: { name: string; message: string }[] = [];
  for (const [query, name] of cases) {
    const attempts = [
      [openStore(url(query), { init: false }), "$.url"],
      [(async () => construct(url(query)))(), path],
    ] as const;
    for (const [attempt, at] of attempts) {
      const { message } = await refusal(attempt, at);
      expect(message).toContain(`"${name}"`);
      refusals.push({ name, message });
    }
  }
  return refusals;
}

describe("store URLs a driver cannot use", () => {
  it("openStore refuses a URL with an unencoded / or # in the password, naming the problem", async () => {
    for (const url of malformed) {
      const error = await refusal(openStore(url), "$.url");
      expect(error.message).toMatch(/percent-encode/);
      expect(error.message).toMatch(/"(postgres|mysql|redis):\/\/app:\*\*\*@\w+\.internal:\d+/);
    }
  });

  it("the store classes refuse it at construction, at their own option", async () => {
    const [postgres, mysql, redis] = malformed as [string, string, string];
    await refusal(
      (async () => new PostgresEventStore({ connectionString: postgres }))(),
      "$.connectionString",
    );
    await refusal((async () => new MysqlEventStore({ uri: mysql }))(), "$.uri");
    await refusal((async () => new RedisEventStore({ url: redis }))(), "$.url");
  });

  it("an unset URL (an environment variable that is not there) is refused, never a default server", async () => {
    for (const missing of [undefined, ""]) {
      await refusal(
        (async () => new PostgresEventStore({ connectionString: missing as unknown as string }))(),
        "$.connectionString",
      );
      await refusal(
        (async () => new MysqlEventStore({ uri: missing as unknown as string }))(),
        "$.uri",
      );
    }
  });

  it("a driver option the URL sets wrongly is invalid-argument, not a TypeError", async () => {
    const error = await refusal(
      openStore("mysql://app:s3cr3t@db.internal:3306/ledger?ssl=true", { init: false }),
      "$.url",
    );
    expect(error.message).toMatch(/SSL/);
  });

  it("redactUrl hides the password of a URL it cannot parse", () => {
    expect(redactUrl(`postgres://app:${secret}@db.internal/ledger`)).toBe(
      "postgres://app:***@db.internal/ledger",
    );
    expect(redactUrl("redis://:p@ss@cache.internal:6379")).toBe("redis://:***@cache.internal:6379");
  });

  it("redactUrl gives back a URL with no credential as it was written", () => {
    for (const url of [
      "sqlite:/tmp/my ledger.db",
      "postgres://app@db.internal/ledger?application_name=on call",
      "mysql://root@127.0.0.1:3306/test?charset=utf8mb4&x=\u00e9",
      "redis://127.0.0.1:6379",
    ])
      expect(redactUrl(url)).toBe(url);
    expect(redactUrl("sqlite:/tmp/my ledger.db?password=s3cret")).toBe(
      "sqlite:/tmp/my ledger.db?password=***",
    );
  });

  it("redactUrl hides a password given as a query parameter (the drivers read ?password= too)", async () => {
    expect(
      redactUrl(
        "postgres://app@db.internal/ledger?sslmode=require&password=s3cret&sslpassword=k3y",
      ),
    ).toBe("postgres://app@db.internal/ledger?sslmode=require&password=***&sslpassword=***");
    expect(redactUrl("redis://cache.internal:6379/0?keyPrefix=app%3A&password=s3cret")).toBe(
      "redis://cache.internal:6379/0?keyPrefix=app%3A&password=***",
    );
    for (const url of [
      "postgres://app@db.internal/ledger?password=s3cret",
      // mysql2 reads no ?password= (the URL's own part gives it), but ?password1= is the same.
      "mysql://app@db.internal/ledger?password1=s3cret&passwordSha1=s3cret",
      "redis://cache.internal:6379/0?password=s3cret",
    ]) {
      const store = await openStore(url, { init: false });
      expect(store.describe().location).not.toContain("s3cret");
      await store.close();
    }
  });

  it("a Redis URL with a query parameter neither the store nor ioredis reads is refused, naming it", async () => {
    // `?prefix=` (the parameter is keyPrefix) was ignored: the store wrote under the default
    // prefix, into another application's keys; an ioredis option given as a string overrode
    // the store's own (maxRetriesPerRequest: 0 makes a lost reply an error, never a re-send).
    await unknownParamsRefused(
      [
        ["prefix=app%3A", "prefix"],
        ["keyprefix=app%3A", "keyprefix"],
        ["db=1&maxRetriesPerRequest=20", "maxRetriesPerRequest"],
      ],
      (query) => `redis://app:s3cr%2Ft%23pw@cache.internal:6379/0?${query}`,
      (url) => new RedisEventStore({ url }),
      "$.url",
    );
  });

  it("a PostgreSQL URL with a query parameter neither the store nor node-postgres reads is refused, naming it", async () => {
    // `?shema=` (the parameter is schema) was ignored: init() made the ledger's tables in
    // public, where `agent-ledger inspect` given `?schema=agent_ledger` found no ledger.
    await unknownParamsRefused(
      [
        ["shema=agent_ledger", "shema"],
        ["sslmode=disable&timeoutMS=1000", "timeoutMS"],
        ["max=5", "max"],
      ],
      (query) => `postgres://app:s3cr%2Ft%23pw@db.internal:5432/ledger?${query}`,
      (connectionString) => new PostgresEventStore({ connectionString }),
      "$.connectionString",
    );
  });

  it("a Redis URL whose database is not a whole number, or is given twice, is refused before any connection", async () => {
    // ioredis reads the database with parseInt: /1.5 selected database 1 and /0x0d database 0
    // (another application's keys), and /abc sent SELECT NaN, whose refusal no caller heard:
    // an unhandled rejection that ended the process. With both, ?db= was ignored.
    for (const tail of ["/abc", "/1.5", "/0x0d", "/13/x", "/%2013", "?db=abc", "/13?db=12"]) {
      const url = `redis://app:s3cr%2Ft%23pw@cache.internal:6379${tail}`;
      const attempts = [
        openStore(url, { init: false }),
        (async () => new RedisEventStore({ url }))(),
      ];
      for (const attempt of attempts) {
        const error = await refusal(attempt, "$.url");
        expect(error.message).toContain("database");
      }
    }
    for (const tail of ["", "/", "/0", "/13", "?db=13", "/13?db=13"]) {
      const store = await openStore(`redis://cache.internal:6379${tail}`, { init: false });
      await store.close();
    }
  });

  it("a MySQL URL with a query parameter neither the store nor mysql2 reads is refused, naming it", async () => {
    // mysql2 only warned of them on stderr: `?timeoutMS=` left the 30 s default, `?database=`
    // (mysql2 takes the database from the path alone) kept the ledger in the path's database,
    // and Prisma's `?sslaccept=strict` (in PlanetScale's URLs) connected without TLS.
    for (const scheme of ["mysql", "mariadb"]) {
      const refusals = await unknownParamsRefused(
        [
          ["shema=agent_ledger", "shema"],
          ["connectTimeout=2000&timeoutMS=1000", "timeoutMS"],
          ["database=agent_ledger", "database"],
          ["password=s3cret", "password"],
          ["sslaccept=strict", "sslaccept"],
          ["ssl-mode=REQUIRED", "ssl-mode"],
        ],
        (query) => `${scheme}://app:s3cr%2Ft%23pw@db.internal:3306/ledger?${query}`,
        (uri) => new MysqlEventStore({ uri }),
        "$.uri",
      );
      for (const { name, message } of refusals) {
        expect(message).toContain(`unknown query parameter "${name}" in the MySQL URL`);
        if (name.startsWith("ssl")) expect(message).toContain("without TLS");
      }
    }
  });

  it("a MySQL URL may carry every parameter the store knows, each one mysql2 reads (it warns of none)", async () => {
    // Values mysql2 takes without a connection: TLS off, no reset on release (which the store
    // refuses), the rest a number where it reads one.
    const values: Record<string, string> = {
      timeoutMs: "5000",
      ssl: "false",
      resetOnRelease: "false",
      flags: "-FOUND_ROWS",
      timezone: "Z",
      charset: "utf8mb4",
    };
    const query = MYSQL_URL_PARAMS.map((name) => `${name}=${values[name] ?? "1"}`).join("&");
    const warned = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const store = new MysqlEventStore({ uri: `mysql://app@db.internal:3306/ledger?${query}` });
      await store.close();
      expect(warned.mock.calls.flat().join("\n")).not.toMatch(/invalid configuration option/);
    } finally {
      warned.mockRestore();
    }
    // What PlanetScale's URLs carry for TLS is one of them.
    const planetScale = 'mysql://app@aws.connect.psdb.cloud/ledger?ssl={"rejectUnauthorized":true}';
    await (await openStore(planetScale, { init: false })).close();
  });

  it("a Redis store's location names its key prefix, the one it was given or the default", async () => {
    const given = new RedisEventStore({
      url: "redis://app:s3cr%2Ft%23pw@cache.internal:6379/2?keyPrefix=app%3A&family=6&password=x",
    });
    expect(given.describe().location).toBe(
      "redis://app:***@cache.internal:6379/2?family=6&password=***&keyPrefix=app:",
    );
    await given.close();
    const byDefault = new RedisEventStore({ url: "redis://cache.internal:6379" });
    expect(byDefault.describe().location).toBe(
      "redis://cache.internal:6379?keyPrefix=agent-ledger:",
    );
    await byDefault.close();
  });

  it("well-formed URLs with encoded passwords, query parameters, IPv6 and socket hosts are accepted", async () => {
    for (const url of [
      "postgres://app:p%40ss%3Aw%2Fo%25rd%23@db.internal:5432/ledger?sslmode=disable&application_name=x",
      "postgres://app:pw@db.internal/ledger?schema=agent&channel_binding=require&target_session_attrs=read-write",
      "postgres://app@%2Fvar%2Frun%2Fpostgresql/ledger",
      "postgres://app:pw@[::1]:5432/ledger",
      "mysql://app:p%40ss%3Aw%2Fo%25rd%23@[::1]:3306/ledger?connectTimeout=1000",
      "redis://default:p%40ss%2F@[::1]:6379/2?keyPrefix=app%3A",
    ]) {
      const store = await openStore(url, { init: false });
      expect(store.describe().location).not.toMatch(/p%40ss|p@ss/);
      await store.close();
    }
  });

  it("a server URL whose // is missing is refused, never read as the driver's default host", async () => {
    // pg read "postgres:/app:pw@127.0.0.1:1/db" as a path on its default server (localhost:5432).
    for (const url of [
      "postgres:/app:s3cret@127.0.0.1:1/db",
      "postgresql:app:s3cret@127.0.0.1:1/db",
      "mysql:/app:s3cret@127.0.0.1:1/db",
      "mariadb:app:s3cret@127.0.0.1:1/db",
    ]) {
      const error = await refusal(openStore(url, { init: false }), "$.url");
      expect(error.message, url).toMatch(/starts with (postgres|mysql):\/\//);
    }
    await refusal(
      (async () => new PostgresEventStore({ connectionString: "postgres:/app:s3cret@h/db" }))(),
      "$.connectionString",
    );
    await refusal((async () => new MysqlEventStore({ uri: "mysql:/app:s3cret@h/db" }))(), "$.uri");
  });

  it("a malformed %-escape in a Redis URL's credentials is invalid-argument, not a URIError", async () => {
    const url = "redis://app:s3cr%et@127.0.0.1:1/0";
    await refusal(openStore(url, { init: false }), "$.url");
    await refusal((async () => new RedisEventStore({ url }))(), "$.url");
  });

  it("a driver's reason for refusing a URL is shown without the URL's secrets", async () => {
    // pg reads the file ?sslkey= names as it parses, and its ENOENT names the file.
    await refusal(
      openStore("postgres://app@127.0.0.1:1/db?sslkey=s3cret.key", { init: false }),
      "$.url",
    );
  });
});

describe("openStore's options", () => {
  it("refuses what is not true or false, such as the text an environment variable holds", async () => {
    for (const [options, path] of [
      [{ create: "false" }, "$.create"],
      [{ upgrade: "no" }, "$.upgrade"],
      [{ upgrade: 0 }, "$.upgrade"],
      [{ init: null }, "$.init"],
      // Misspelt, `create: false` would be the default, true: a ledger made where none was meant.
      [{ creat: false }, "$.creat"],
      ["readonly", "$"],
    ] as const)
      await expect(
        openStore("memory:", options as unknown as OpenStoreOptions),
      ).rejects.toMatchObject({ code: "invalid-argument", path });
  });

  it("a misspelt create: false on a SQLite path is refused before the file is made", async () => {
    const directory = mkdtempSync(join(tmpdir(), "open-store-options-"));
    try {
      const path = join(directory, "ledger.db");
      const error = await openStore(`sqlite:${path}`, { creat: false } as never).catch(
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({ code: "invalid-argument", path: "$.creat" });
      expect((error as Error).message).toContain("(its options: init, create, upgrade)");
      expect(existsSync(path)).toBe(false);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });
});

describe("openStore memory:", () => {
  // `memory:foo` was opened as a fresh empty store, as if the name meant something: a second
  // `openStore("memory:foo")` found none of the first one's events.
  it("refuses a name, path or options after memory:, naming the URL, and opens memory: alone", async () => {
    for (const url of ["memory:foo", "memory://ledger", "MEMORY:./x.db", "memory:?keyPrefix=a"]) {
      const error = await refusal(openStore(url), "$.url");
      expect(error.message).toContain(JSON.stringify(url));
      expect(error.message).toMatch(/memory: takes no name, path or options/);
    }
    const store = await openStore("memory:");
    expect(await store.listSessions()).toMatchObject({ sessions: [] });
    await store.close();
  });
});
