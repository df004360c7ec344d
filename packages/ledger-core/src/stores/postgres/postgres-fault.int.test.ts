import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { expectAbsentThenRetried, startFaultRun } from "../sql/testing/fault-batch.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const schema = `ledger_fault_${uuidv7().replaceAll("-", "")}`;
const admin = available ? new pg.Client({ connectionString: SERVER_URLS.postgres }) : undefined;
await admin?.connect();
afterAll(async () => {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin?.end();
});

/** The pid of the backend waiting on a lock for a statement that mentions `text`. */
async function blockedBackend(client: pg.Client, text: string): Promise<number> {
  for (let tries = 0; tries < 100; tries++) {
    const result = await client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND query LIKE $1",
      [`%${text}%`],
    );
    if (result.rows[0]) return result.rows[0].pid;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("the append never waited on the lock");
}

describe.skipIf(!available)("PostgresEventStore when the connection drops mid-append", () => {
  it("fails with store-unavailable, writes nothing, and a retry of the batch succeeds", async () => {
    const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
    await store.init();
    const { sessionId, batch } = await startFaultRun(store);
    // Hold the session's counter row: the append locks the run head, then waits here.
    const blocker = new pg.Client({ connectionString: SERVER_URLS.postgres });
    await blocker.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM "${schema}".sessions WHERE session_id = $1 FOR UPDATE`, [
      sessionId,
    ]);
    const pending = store.append(batch).then(
      () => undefined,
      (error: unknown) => error,
    );
    const pid = await blockedBackend(admin as pg.Client, `"${schema}"."sessions"`);
    await (admin as pg.Client).query("SELECT pg_terminate_backend($1)", [pid]);
    const error = await pending;
    await blocker.query("ROLLBACK");
    await blocker.end();

    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    const cause = (error as LedgerError).cause as { code?: string };
    expect(cause).toBeInstanceOf(Error);
    expect(cause.code).toBe("57P01"); // admin_shutdown: the terminated backend
    await expectAbsentThenRetried(store, sessionId, batch);
    await store.close();
  });

  it("reports an unreachable server as store-unavailable with the driver error as cause", async () => {
    const store = new PostgresEventStore({
      connectionString: "postgres://postgres@127.0.0.1:1/none",
    });
    const error = await store.init().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(LedgerError.isInstance(error, "store-unavailable")).toBe(true);
    expect((error as LedgerError).cause).toBeInstanceOf(Error);
    await store.close();
  });
});
