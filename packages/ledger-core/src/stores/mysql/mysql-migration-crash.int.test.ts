import { spawn } from "node:child_process";
import mysql from "mysql2/promise";
import { afterAll, describe, expect, it } from "vitest";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { loadMigrations } from "../sql/migrations.js";
import { racerScript, runRacer } from "../sql/testing/race-check.js";
import { MysqlEventStore } from "./mysql-store.js";

// MySQL commits each DDL statement on its own: a migrator that dies inside a migration leaves
// its first statements applied and its version unrecorded. The next init() must finish it.

const available = await serverAvailable("mysql");
const places = freshPlaces(afterAll);
const admin = available ? await mysql.createConnection(SERVER_URLS.mysql) : undefined;
afterAll(async () => {
  await admin?.end();
});

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.skipIf(!available)("MysqlEventStore migrations after a killed migrator", () => {
  it("8 processes finish a migration whose migrator was SIGKILLed half way", async () => {
    const { database, url } = await places.database("mcrash").create();
    const client = admin as mysql.Connection;
    // A database of the first release: migration 0000 applied and recorded.
    const setup = await mysql.createConnection({ uri: url });
    const [first] = loadMigrations("mysql");
    for (const statement of first?.statements ?? []) await setup.query(statement);
    await setup.query("INSERT INTO schema_version VALUES (1, ?, 'then')", [first?.tag]);
    // A reader's open transaction on blobs holds the ALTER of migration 0001 back, after its
    // CREATE TABLE has committed: the moment the migrator is killed.
    await setup.query("BEGIN");
    await setup.query("SELECT count(*) FROM blobs");
    const target = { kind: "mysql", location: url };
    const migrator = spawn(
      process.execPath,
      [racerScript, JSON.stringify({ target, sessionId: "s", runId: "r", writer: 0, count: 0 })],
      { stdio: "ignore" },
    );
    const exited = new Promise((resolve) => migrator.on("exit", resolve));
    await until(async () => {
      const [rows] = (await client.query(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = 'blob_refs'",
        [database],
      )) as unknown as [unknown[]];
      return rows.length > 0;
    }, "the migrator to create blob_refs");
    migrator.kill("SIGKILL");
    await exited;
    await setup.query("ROLLBACK");
    await setup.end();

    await Promise.all(
      Array.from({ length: 8 }, (_, writer) =>
        runRacer({ target, sessionId: "s", runId: `run-${writer}`, writer, count: 2 }),
      ),
    );
    const [versions] = (await client.query(
      `SELECT version FROM \`${database}\`.schema_version ORDER BY version`,
    )) as unknown as [{ version: number }[]];
    expect(versions.map((row) => row.version)).toEqual(
      loadMigrations("mysql").map((migration) => migration.version),
    );
    const store = new MysqlEventStore({ uri: url });
    try {
      await store.init();
      const ref = await store.putBlob("evidence after the repair");
      await store.append({
        sessionId: "s",
        runId: "done",
        expectedSeq: 0,
        events: [{ type: "run.started", evidenceRefs: [ref] }, { type: "run.completed" }],
      });
      expect((await store.readSession({ sessionId: "s" })).events).toHaveLength(18);
      expect(new TextDecoder().decode(await store.getBlob(ref))).toBe("evidence after the repair");
    } finally {
      await store.close();
    }
  });

  it("finishes the first migration a killed migrator left half done, and refuses someone else's table", async () => {
    const client = admin as mysql.Connection;
    const [first] = loadMigrations("mysql");
    const fresh = () => places.database("mfirst").create();
    // The first statement of 0000 committed, then the migrator died.
    const half = await fresh();
    await client.query(`USE \`${half.database}\``);
    await client.query(first?.statements[0] as string);
    const store = new MysqlEventStore({ uri: half.url });
    try {
      await store.init();
      await store.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started", evidenceRefs: [await store.putBlob("b")] }],
      });
    } finally {
      await store.close();
    }
    // A table of the same name with rows in it belongs to another application.
    const shared = await fresh();
    await client.query(`CREATE TABLE \`${shared.database}\`.events (id int)`);
    await client.query(`INSERT INTO \`${shared.database}\`.events VALUES (1)`);
    const refused = new MysqlEventStore({ uri: shared.url });
    try {
      await expect(refused.init()).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.uri",
        message: expect.stringContaining("table events"),
      });
    } finally {
      await refused.close();
    }
    const [tables] = (await client.query(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ?",
      [shared.database],
    )) as unknown as [{ name: string }[]];
    expect(tables.map((table) => table.name)).toEqual(["events"]);
  });
});
