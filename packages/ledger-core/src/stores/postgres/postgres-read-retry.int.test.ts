import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import {
  readRightAfter,
  readsSucceedAfterKill,
  refusedOrLateSentOnce,
} from "../sql/testing/read-retry-scenario.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const schema = `ledger_read_retry_${uuidv7().replaceAll("-", "")}`;
const admin = available ? new pg.Client({ connectionString: SERVER_URLS.postgres }) : undefined;
await admin?.connect();
afterAll(async () => {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin?.end();
});

/**
 * `read`, sent right after the server ended every connection of the application `name` and
 * before the store's driver has read a byte of it (`readRightAfter`).
 */
function readRightAfterEnd(name: string): <T>(read: () => Promise<T>) => Promise<T> {
  return (read) =>
    readRightAfter(
      (admin as pg.Client)
        .query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
          [name],
        )
        .then((ending) => expect(ending.rowCount).toBeGreaterThanOrEqual(1)),
      read,
    );
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
      await readsSucceedAfterKill(store, readRightAfterEnd(name), { pooled: true });
    });

    it("a statement the server refuses, or a wait past the store's bound, is not sent again", async () => {
      const pool = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 2 });
      const store = new PostgresEventStore({ pool, schema: `${schema}_refused`, timeoutMs: 500 });
      let sent = 0;
      pool.on("acquire", () => sent++);
      const holder = new pg.Client({ connectionString: SERVER_URLS.postgres });
      try {
        await refusedOrLateSentOnce({
          store,
          timeoutMs: 500,
          sessionId: "s",
          sends: { reset: () => (sent = 0), count: () => sent },
          // An operator renamed the table: every read of it fails the same way.
          refuse: async () => {
            await admin?.query(`ALTER TABLE "${schema}_refused".events RENAME TO gone`);
          },
          refusedBy: (error) => expect((error as Error).cause).toMatchObject({ code: "42P01" }),
          // A lock held past the bound.
          holdPastBound: async () => {
            await holder.connect();
            await holder.query("BEGIN");
            await holder.query(`LOCK TABLE "${schema}_refused".runs IN ACCESS EXCLUSIVE MODE`);
          },
          release: async () => {
            await holder.query("ROLLBACK");
            await holder.end();
          },
        });
      } finally {
        await store.close();
        await pool.end();
        await admin?.query(`DROP SCHEMA IF EXISTS "${schema}_refused" CASCADE`);
      }
    });
  },
);
