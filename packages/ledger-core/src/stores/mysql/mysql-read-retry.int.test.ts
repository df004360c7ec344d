import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const database = `ledger_read_retry_${uuidv7().replaceAll("-", "")}`;
let admin: mysql.Connection | undefined;

function uri(): string {
  const url = new URL(SERVER_URLS.mysql);
  url.pathname = `/${database}`;
  return url.toString();
}

const actor = { type: "agent", id: "a" } as const;

/** Holds this process's event loop for `ms` without yielding to it. */
function holdEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * `read`, sent right after the server ended every connection to the test database (KILL
 * CONNECTION, as an operator or a failover does) and before the store's driver has read a
 * byte of it: a resume that lands right then. The KILLs go out, the event loop is held while
 * the server carries them out, and `read` is called as the hold ends, so its statement goes
 * out on a connection the server already closed.
 */
async function readRightAfterKill<T>(read: () => Promise<T>): Promise<T> {
  const connection = admin as mysql.Connection;
  const [rows] = (await connection.query(
    "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()",
    [database],
  )) as unknown as [{ id: number }[]];
  expect(rows.length).toBeGreaterThanOrEqual(1);
  // One statement list, one round trip: the server ends them all while the loop is held (a
  // KILL answers before its connection is closed, and a second KILL sent after the first's
  // answer could end a connection the read is already on).
  const kills = connection.query(rows.map(({ id }) => `KILL CONNECTION ${Number(id)};`).join(""));
  holdEventLoop(200);
  const reading = read().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await kills;
  const outcome = await reading;
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

describe.skipIf(!available)("MysqlEventStore reads after the server ended its connections", () => {
  beforeAll(async () => {
    admin = await mysql.createConnection({ uri: SERVER_URLS.mysql, multipleStatements: true });
    await admin.query(`CREATE DATABASE \`${database}\``);
  });
  afterAll(async () => {
    await admin?.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin?.end();
  });

  it("a resume right after sends its reads again on new connections, and resumes", async () => {
    const store = new MysqlEventStore({ uri: uri() });
    await store.init();
    const sessionId = uuidv7();
    const recorder = new SessionRecorder({ store, sessionId, runId: "r", actor });
    await recorder.startRun();
    await recorder.modelCompleted(await recorder.beforeModelCall({ request: { n: 1 } }), {
      ok: true,
    });
    // Three idle connections in the pool, all ended: the pool hands one out.
    await Promise.all([1, 2, 3].map(() => store.listRuns(sessionId)));
    const resumed = await readRightAfterKill(() =>
      SessionRecorder.resume({ store, sessionId, runId: "r", actor }),
    );
    expect(resumed.resumed).toBe(true);
    expect(resumed.length).toBe(3);

    // Each read of the store, the same way.
    const ref = await store.putBlob("kept");
    const reads: Record<string, () => Promise<unknown>> = {
      readRun: () => store.readRun({ sessionId, runId: "r" }),
      readSession: () => store.readSession({ sessionId }),
      listRuns: () => store.listRuns(sessionId),
      listSessions: () => store.listSessions({ limit: 10 }),
      runHead: () => store.runHead({ sessionId, runId: "r" }),
      getBlob: () => store.getBlob(ref),
      getBlobs: () => store.getBlobs([ref]),
    };
    for (const [operation, read] of Object.entries(reads))
      await expect(readRightAfterKill(read), operation).resolves.toBeDefined();
    await store.close();
  });

  it("a statement the server refuses, or a wait past the store's bound, is not sent again", async () => {
    const pool = mysql.createPool({ uri: uri(), connectionLimit: 2 });
    const store = new MysqlEventStore({ pool, timeoutMs: 500 });
    let sent = 0;
    pool.on("acquire", () => sent++);
    const holder = await mysql.createConnection(uri());
    try {
      await store.init();
      await store.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      // An operator renamed the table: every read of it fails the same way.
      await admin?.query(`RENAME TABLE \`${database}\`.events TO \`${database}\`.gone`);
      sent = 0;
      const refused = await store
        .readRun({ sessionId: "s", runId: "r" })
        .catch((error: unknown) => error);
      expect(LedgerError.isInstance(refused, "store-unavailable")).toBe(true);
      expect((refused as LedgerError).cause).toMatchObject({ errno: 1146 });
      expect(sent).toBe(1);

      // A lock held past the bound: the read times out (its connection is destroyed).
      await holder.query("LOCK TABLES runs WRITE");
      sent = 0;
      const late = await store
        .runHead({ sessionId: "s", runId: "r" })
        .catch((error: unknown) => error);
      await holder.query("UNLOCK TABLES");
      expect(LedgerError.isInstance(late, "store-unavailable")).toBe(true);
      expect((late as Error).message).toContain("within 500 ms");
      expect(sent).toBe(1);
    } finally {
      await holder.end();
      await store.close();
      await pool.end();
    }
  });
});
