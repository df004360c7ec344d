import { randomUUID } from "node:crypto";
import { openStore } from "@agent-ledger/core";
import { freshPlaces, SERVER_URLS, serverAvailable } from "@agent-ledger/core/testing";
import { Redis } from "ioredis";
import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { shippedMigrations } from "./older-ledger.test.data.js";
import { runBin } from "./session-fixture.test.data.js";

// A ledger of an older release on each server, and a user that may only read it: the on-call
// person's credentials. Every command refuses the ledger (exit 1, never 4: the server answered);
// `upgrade` as that user is refused what it must change (exit 1, saying why), and as the
// owner upgrades it.

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});
const places = freshPlaces(afterAll);

interface OlderLedger {
  ownerUrl: string;
  readerUrl: string;
  /** The version the ledger records (schema or key layout). */
  version(): Promise<number>;
  found: number;
  reads: number;
  what: string;
}

const withUser = (storeUrl: string, user: string) => {
  const url = new URL(storeUrl);
  url.username = user;
  url.password = "reader-pw";
  return url.toString();
};

async function postgresOlder(): Promise<OlderLedger> {
  const schema = `cli_older_${randomUUID().replaceAll("-", "")}`;
  const reader = `ro_${randomUUID().replaceAll("-", "")}`;
  const admin = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await admin.connect();
  cleanups.push(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin.query(`DROP ROLE IF EXISTS "${reader}"`);
    await admin.end();
  });
  const [first] = shippedMigrations("postgres");
  await admin.query(`CREATE SCHEMA "${schema}"`);
  await admin.query(`SET search_path TO "${schema}"`);
  for (const statement of first?.statements ?? []) await admin.query(statement);
  await admin.query("INSERT INTO schema_version VALUES ($1, $2, 'then')", [
    first?.version,
    first?.tag,
  ]);
  await admin.query(`CREATE ROLE "${reader}" LOGIN PASSWORD 'reader-pw'`);
  await admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${reader}"`);
  await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${reader}"`);
  const url = new URL(SERVER_URLS.postgres);
  url.searchParams.set("schema", schema);
  return {
    ownerUrl: url.toString(),
    readerUrl: withUser(url.toString(), reader),
    version: async () =>
      (await admin.query(`SELECT max(version) AS v FROM "${schema}".schema_version`)).rows[0].v,
    found: 1,
    reads: shippedMigrations("postgres").length,
    what: "schema",
  };
}

async function mysqlOlder(): Promise<OlderLedger> {
  const { database, url } = await places.database("cli_older").create();
  const reader = `ro_${randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const admin = await mysql.createConnection({ uri: url });
  cleanups.push(async () => {
    await admin.query(`DROP USER IF EXISTS '${reader}'@'%'`);
    await admin.end();
  });
  const [first] = shippedMigrations("mysql");
  for (const statement of first?.statements ?? []) await admin.query(statement);
  await admin.query("INSERT INTO schema_version VALUES (?, ?, 'then')", [
    first?.version,
    first?.tag,
  ]);
  await admin.query(`CREATE USER '${reader}'@'%' IDENTIFIED BY 'reader-pw'`);
  await admin.query(`GRANT SELECT ON \`${database}\`.* TO '${reader}'@'%'`);
  return {
    ownerUrl: url,
    readerUrl: withUser(url, reader),
    version: async () => {
      const [rows] = (await admin.query(
        `SELECT max(version) AS v FROM \`${database}\`.schema_version`,
      )) as unknown as [{ v: number }[]];
      return Number(rows[0]?.v);
    },
    found: 1,
    reads: shippedMigrations("mysql").length,
    what: "schema",
  };
}

async function redisOlder(): Promise<OlderLedger> {
  const prefix = `cli-older-${randomUUID()}:`;
  const reader = `ro-${randomUUID()}`;
  const admin = new Redis(SERVER_URLS.redis);
  cleanups.push(async () => {
    const keys = await admin.keys(`${prefix}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.call("ACL", "DELUSER", reader);
    admin.disconnect();
  });
  const url = new URL(SERVER_URLS.redis);
  url.searchParams.set("keyPrefix", prefix);
  // Layout 2 differs from 3 in its index of sessions alone: with no session yet, a ledger of
  // layout 2 is this one with its version set back.
  const store = await openStore(url.toString());
  await store.close();
  await admin.set(`${prefix}schema-version`, "2");
  await admin.call(
    "ACL",
    "SETUSER",
    reader,
    "on",
    ">reader-pw",
    `~${prefix}*`,
    "+@read",
    "+@connection",
    "+info",
    "+evalsha",
    "+eval",
  );
  return {
    ownerUrl: url.toString(),
    readerUrl: withUser(url.toString(), reader),
    version: async () => Number(await admin.get(`${prefix}schema-version`)),
    found: 2,
    reads: 3,
    what: "key layout",
  };
}

const servers = [
  { name: "PostgreSQL", kind: "postgres", older: postgresOlder },
  { name: "MariaDB", kind: "mysql", older: mysqlOlder },
  { name: "Redis", kind: "redis", older: redisOlder },
] as const;

for (const server of servers) {
  const available = await serverAvailable(server.kind);
  describe.skipIf(!available)(`agent-ledger upgrade on ${server.name}`, () => {
    it("a user that may only read is refused the ledger of an older release, and its upgrade, with exit 1; its owner upgrades it", async () => {
      const older = await server.older();
      const sessions = await runBin(["--store", older.readerUrl, "sessions"]);
      expect(sessions.code, sessions.stderr).toBe(1);
      expect(sessions.stderr).toContain(
        `is at ${older.what} version ${older.found}, an older release's; this release reads ${older.what} version ${older.reads}`,
      );
      expect(sessions.stderr).toContain("run agent-ledger upgrade --store '");
      expect(sessions.stderr).toContain(":***@");
      expect(sessions.stderr).toContain("(put the password back in place of ***)");
      expect(sessions.stderr).not.toContain("reader-pw");

      const denied = await runBin(["--store", older.readerUrl, "upgrade"]);
      expect(denied.code, denied.stderr).toBe(1);
      expect(denied.stderr).toContain("refused the store URL's user");
      expect(denied.stderr).toContain("run agent-ledger upgrade as a user that may");
      expect(denied.stderr).not.toContain("reader-pw");
      expect(await older.version()).toBe(older.found);

      const upgraded = await runBin(["--store", older.ownerUrl, "upgrade"]);
      expect(upgraded.code, upgraded.stderr).toBe(0);
      expect(upgraded.stdout).toMatch(
        new RegExp(
          `^upgraded the ledger at \\S+ from ${older.what} version ${older.found} to ${older.reads}\\n$`,
        ),
      );
      expect(await older.version()).toBe(older.reads);
      const after = await runBin(["--store", older.readerUrl, "upgrade"]);
      expect(after.code, after.stderr).toBe(0);
      expect(after.stdout).toContain("nothing to upgrade");
    });
  });
}
