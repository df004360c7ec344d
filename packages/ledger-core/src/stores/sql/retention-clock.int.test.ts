import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { deleteKeys, freshPrefix } from "../redis/testing/test-keys.js";
import { openRacerStore, type RacerTarget } from "./testing/racer-store.js";

// The retention grace period is measured on one clock, the database's: a writer on a host
// whose clock is a minute behind re-puts a blob, and a deleteSession in this process between
// that put and the writer's append must keep it, as it keeps one put by a writer on time.

const putterScript = fileURLToPath(
  new URL("../../../dist/stores/sql/testing/skewed-putter.js", import.meta.url),
);
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const graceMs = 1000;

async function checkSkewedWriter(target: RacerTarget): Promise<void> {
  const store = await openRacerStore(target);
  await store.init();
  try {
    const content = `evidence a late writer names ${uuidv7()}`;
    const ref = await store.putBlob(content);
    await store.append({
      sessionId: "victim",
      runId: "r",
      expectedSeq: 0,
      events: [
        { type: "run.started", evidenceRefs: [ref] },
        { type: "run.completed", payload: {} },
      ],
    });
    await new Promise((resolve) => setTimeout(resolve, graceMs + 200));

    const child = spawn(
      process.execPath,
      [putterScript, JSON.stringify({ target, sessionId: "writer", content, skewMs: -60_000 })],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (chunk) => {
        stdout += chunk;
        if (stdout.includes("put\n")) resolve();
      });
      child.on("close", () => reject(new Error(`the writer exited early: ${stderr}`)));
    });
    // The writer has put the blob again and is about to append the event naming it.
    expect(await store.deleteSession("victim", { blobGraceMs: graceMs })).toMatchObject({
      deletedBlobs: 0,
      keptBlobs: 1,
    });
    child.stdin.write("go\n");
    expect(await exited, stderr).toBe(0);
    expect(new TextDecoder().decode(await store.getBlob(ref))).toBe(content);
  } finally {
    await store.close();
  }
}

describe("SqliteEventStore retention grace on the database's clock", () => {
  it("keeps a blob re-put by a writer whose clock is behind", async () => {
    const folder = mkdtempSync(join(tmpdir(), "ledger-retention-clock-"));
    cleanups.push(async () => rmSync(folder, { recursive: true, force: true }));
    await checkSkewedWriter({ kind: "sqlite", location: join(folder, "ledger.db") });
  });
});

describe.skipIf(!(await serverAvailable("postgres")))(
  "PostgresEventStore retention grace on the database's clock",
  () => {
    it("keeps a blob re-put by a writer whose clock is behind", async () => {
      const schema = `ledger_clock_${uuidv7().replaceAll("-", "")}`;
      cleanups.push(async () => {
        const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
        await client.connect();
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      });
      await checkSkewedWriter({ kind: "postgres", location: SERVER_URLS.postgres, schema });
    });
  },
);

describe.skipIf(!(await serverAvailable("mysql")))(
  "MysqlEventStore retention grace on the database's clock",
  () => {
    it("keeps a blob re-put by a writer whose clock is behind", async () => {
      const database = `ledger_clock_${uuidv7().replaceAll("-", "")}`;
      const admin = await mysql.createConnection({ uri: SERVER_URLS.mysql });
      await admin.query(`CREATE DATABASE \`${database}\``);
      cleanups.push(async () => {
        await admin.query(`DROP DATABASE IF EXISTS \`${database}\``);
        await admin.end();
      });
      const url = new URL(SERVER_URLS.mysql);
      url.pathname = `/${database}`;
      await checkSkewedWriter({ kind: "mysql", location: url.toString() });
    });
  },
);

describe.skipIf(!(await serverAvailable("redis")))(
  "RedisEventStore retention grace on the database's clock",
  () => {
    it("keeps a blob re-put by a writer whose clock is behind", async () => {
      const keyPrefix = freshPrefix("clock");
      cleanups.push(() => deleteKeys(SERVER_URLS.redis, keyPrefix));
      await checkSkewedWriter({ kind: "redis", location: SERVER_URLS.redis, keyPrefix });
    });
  },
);
