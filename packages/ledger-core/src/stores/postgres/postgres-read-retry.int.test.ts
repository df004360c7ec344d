import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const schema = `ledger_read_retry_${uuidv7().replaceAll("-", "")}`;
const admin = available ? new pg.Client({ connectionString: SERVER_URLS.postgres }) : undefined;
await admin?.connect();
afterAll(async () => {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin?.end();
});

const actor = { type: "agent", id: "a" } as const;

/** Holds this process's event loop for `ms` without yielding to it. */
function holdEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * `read`, sent right after the server ended every connection of the application `name` (as an
 * operator or a failover does) and before the store's driver has read a byte of it: a resume
 * that lands right then. The terminations go out, the event loop is held while the server
 * carries them out, and `read` is called as the hold ends, so its statement goes out on a
 * connection the server already ended. (Awaiting the terminations' answer first would let the
 * loop read the ended connections' notices before the read, or not, whichever socket it read
 * first.)
 */
async function readRightAfterEnd<T>(name: string, read: () => Promise<T>): Promise<T> {
  const ending = (admin as pg.Client).query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    [name],
  );
  holdEventLoop(200);
  const reading = read().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  expect((await ending).rowCount).toBeGreaterThanOrEqual(1);
  const outcome = await reading;
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

/** A store on its own pool, whose connections carry a name of their own. */
function namedStore(): { store: PostgresEventStore; name: string } {
  const name = `ledger_read_retry_${uuidv7().slice(-12)}`;
  const url = new URL(SERVER_URLS.postgres);
  url.searchParams.set("application_name", name);
  return { store: new PostgresEventStore({ connectionString: url.href, schema }), name };
}

describe.skipIf(!available)(
  "PostgresEventStore reads after the server ended its connections",
  () => {
    it("a resume right after sends its reads again on new connections, and resumes", async () => {
      const { store, name } = namedStore();
      await store.init();
      const sessionId = uuidv7();
      const recorder = new SessionRecorder({ store, sessionId, runId: "r", actor });
      await recorder.startRun();
      await recorder.modelCompleted(await recorder.beforeModelCall({ request: { n: 1 } }), {
        ok: true,
      });
      // Three idle connections in the pool, all ended: the pool hands one out.
      await Promise.all([1, 2, 3].map(() => store.listRuns(sessionId)));
      const resumed = await readRightAfterEnd(name, () =>
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
      for (const [operation, read] of Object.entries(reads)) {
        await expect(readRightAfterEnd(name, read), operation).resolves.toBeDefined();
      }
      await store.close();
    });

    it("a statement the server refuses, or a wait past the store's bound, is not sent again", async () => {
      const pool = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 2 });
      const store = new PostgresEventStore({ pool, schema: `${schema}_refused`, timeoutMs: 500 });
      let sent = 0;
      pool.on("acquire", () => sent++);
      try {
        await store.init();
        await store.append({
          sessionId: "s",
          runId: "r",
          expectedSeq: 0,
          events: [{ type: "run.started" }],
        });
        // An operator renamed the table: every read of it fails the same way.
        await admin?.query(`ALTER TABLE "${schema}_refused".events RENAME TO gone`);
        sent = 0;
        const refused = await store
          .readRun({ sessionId: "s", runId: "r" })
          .catch((error: unknown) => error);
        expect(LedgerError.isInstance(refused, "store-unavailable")).toBe(true);
        expect((refused as LedgerError).cause).toMatchObject({ code: "42P01" });
        expect(sent).toBe(1);

        // A lock held past the bound: the read times out (its connection is destroyed).
        const holder = new pg.Client({ connectionString: SERVER_URLS.postgres });
        await holder.connect();
        await holder.query("BEGIN");
        await holder.query(`LOCK TABLE "${schema}_refused".runs IN ACCESS EXCLUSIVE MODE`);
        sent = 0;
        const late = await store
          .runHead({ sessionId: "s", runId: "r" })
          .catch((error: unknown) => error);
        await holder.query("ROLLBACK");
        await holder.end();
        expect(LedgerError.isInstance(late, "store-unavailable")).toBe(true);
        expect((late as Error).message).toContain("within 500 ms");
        expect(sent).toBe(1);
      } finally {
        await store.close();
        await pool.end();
        await admin?.query(`DROP SCHEMA IF EXISTS "${schema}_refused" CASCADE`);
      }
    });
  },
);
