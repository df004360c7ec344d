import { MysqlEventStore } from "@agent-ledger/core/mysql";
import { PostgresEventStore } from "@agent-ledger/core/postgres";
import { RedisEventStore } from "@agent-ledger/core/redis";
import { SqliteEventStore } from "@agent-ledger/core/sqlite";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";

// Made before anything connects: none of these needs a server.
type Make = () => unknown;

function refusal(make: Make): LedgerError {
  let error: unknown;
  try {
    make();
  } catch (caught) {
    error = caught;
  }
  expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
  return error as LedgerError;
}

const postgres = "postgres://postgres@127.0.0.1:5432/test";
const mysql = "mysql://root@127.0.0.1:3306/test";
const redis = "redis://127.0.0.1:6379";

describe("a store's options", () => {
  it.each([
    ["SqliteEventStore", (options: unknown) => new SqliteEventStore(options as never)],
    ["PostgresEventStore", (options: unknown) => new PostgresEventStore(options as never)],
    ["MysqlEventStore", (options: unknown) => new MysqlEventStore(options as never)],
    ["RedisEventStore", (options: unknown) => new RedisEventStore(options as never)],
  ])("%s: options that are not an object are refused at $, naming the store", (name, make) => {
    for (const options of [undefined, null, "./ledger.db", 5, []]) {
      const error = refusal(() => make(options));
      expect(error.path).toBe("$");
      expect(error.message).toContain(`${name} needs its options`);
    }
  });

  it.each([
    [
      "SqliteEventStore",
      () => new SqliteEventStore({ path: "./x.db", busyTimout: 5 } as never),
      "$.busyTimout",
      "path, database",
    ],
    [
      "PostgresEventStore",
      () => new PostgresEventStore({ connectionString: postgres, shema: "app" } as never),
      "$.shema",
      "pool, connectionString, schema, timeoutMs",
    ],
    [
      "MysqlEventStore",
      () => new MysqlEventStore({ uri: mysql, databse: "app" } as never),
      "$.databse",
      "pool, uri, database, timeoutMs",
    ],
    [
      // Written under the default prefix, the ledger would mix with another tenant's.
      "RedisEventStore",
      () => new RedisEventStore({ url: redis, keyPrefx: "tenant-1:" } as never),
      "$.keyPrefx",
      "client, url, keyPrefix, timeoutMs",
    ],
  ])("%s: an option it does not take is refused at its path", (_name, make, path, known) => {
    const error = refusal(make);
    expect(error.path).toBe(path);
    expect(error.message).toContain(`(its options: ${known})`);
  });

  it("both a connection of the application's and one to make are refused: one of them would be ignored", () => {
    const database = new Database(":memory:");
    try {
      expect(
        refusal(() => new SqliteEventStore({ path: "./x.db", database } as never)).message,
      ).toContain("exactly one of database or path");
    } finally {
      database.close();
    }
    const pool = { connect() {}, query() {}, end() {} };
    expect(
      refusal(() => new PostgresEventStore({ pool, connectionString: postgres } as never)).message,
    ).toContain("exactly one of pool or connectionString");
    expect(
      refusal(() => new MysqlEventStore({ pool: { getConnection() {} }, uri: mysql } as never))
        .message,
    ).toContain("exactly one of pool or uri");
  });
});
