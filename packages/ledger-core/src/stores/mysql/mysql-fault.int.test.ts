import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { expectAbsentThenRetried, startFaultRun } from "../sql/testing/fault-batch.js";
import { MysqlEventStore } from "./mysql-store.js";

const available = await serverAvailable("mysql");
const { database, url, create } = freshPlaces(afterAll).database("fault");
let admin: mysql.Connection | undefined;

/** The id of the connection waiting on a lock in the test database. */
async function blockedConnection(): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const [rows] = (await (admin as mysql.Connection).query(
      "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = ? AND COMMAND IN ('Query', 'Execute') AND ID <> CONNECTION_ID() AND INFO LIKE '%sessions%'",
      [database],
    )) as unknown as [{ id: number }[]];
    if (rows[0]) return rows[0].id;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the append never waited on the lock");
}

describe.skipIf(!available)("MysqlEventStore when the connection drops mid-append", () => {
  // Made in the hooks, not at load: a run that filters these tests out leaves no database.
  beforeAll(async () => {
    admin = await mysql.createConnection(SERVER_URLS.mysql);
    await create();
  });
  afterAll(async () => {
    await admin?.end();
  });

  it("fails with store-unavailable, writes nothing, and a retry of the batch succeeds", async () => {
    const store = new MysqlEventStore({ uri: url });
    await store.init();
    const { sessionId, batch } = await startFaultRun(store);
    // Hold the session's counter row: the append locks the run head, then waits here.
    const blocker = await mysql.createConnection(url);
    await blocker.query("START TRANSACTION");
    await blocker.query("SELECT 1 FROM sessions WHERE session_id = ? FOR UPDATE", [sessionId]);
    const pending = store.append(batch).then(
      () => undefined,
      (error: unknown) => error,
    );
    const id = await blockedConnection();
    await admin?.query(`KILL CONNECTION ${Number(id)}`);
    const error = await pending;
    await blocker.query("ROLLBACK");
    await blocker.end();

    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect((error as LedgerError).cause).toBeInstanceOf(Error);
    expect(String((error as LedgerError).cause)).toMatch(/connection|killed|closed/i);
    await expectAbsentThenRetried(store, sessionId, batch);
    await store.close();
  });

  it("reports an unreachable server as store-unavailable with the driver error as cause", async () => {
    const store = new MysqlEventStore({ uri: "mysql://root@127.0.0.1:1/none" });
    const error = await store.init().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect((error as LedgerError).cause).toBeInstanceOf(Error);
    await store.close();
  });
});
