import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { LedgerError } from "../../events/errors.js";
import { uuidv7 } from "../../events/ids.js";
import { SessionRecorder } from "../../recorder/session-recorder.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const schema = `ledger_killed_${uuidv7().replaceAll("-", "")}`;
const admin = available ? new pg.Client({ connectionString: SERVER_URLS.postgres }) : undefined;
await admin?.connect();
afterAll(async () => {
  await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await admin?.end();
});

/**
 * A server that ends the store's connections again and again (a failover, an operator's
 * pg_terminate_backend) while 20 agents record. A client that pg-pool hands out while its
 * connection is ended used to emit 'error' with no listener and end the process (vitest
 * reports that as an unhandled error and fails the run).
 */
describe.skipIf(!available)("PostgresEventStore while the server ends its connections", () => {
  for (const pool of ["its own pool", "the application's pool"] as const) {
    it(`keeps the process alive and every recorder usable, on ${pool}`, async () => {
      const appName = `ledger_killed_${uuidv7().slice(-12)}`;
      const url = new URL(SERVER_URLS.postgres);
      url.searchParams.set("application_name", appName);
      const appPool =
        pool === "its own pool" ? undefined : new pg.Pool({ connectionString: url.href, max: 10 });
      appPool?.on("error", () => {});
      const store = appPool
        ? new PostgresEventStore({ pool: appPool, schema, timeoutMs: 10_000 })
        : new PostgresEventStore({ connectionString: url.href, schema, timeoutMs: 10_000 });
      await store.init();
      const sessionPrefix = uuidv7();
      let stop = false;
      let recorded = 0;
      const codes = new Set<string>();
      const agents = Array.from({ length: 20 }, async (_, index) => {
        const sessionId = `${sessionPrefix}-${index}`;
        const actor = { type: "agent", id: "a" } as const;
        // After a failure the agent starts a new run (a resume would re-execute from the start).
        let runs = 0;
        const fresh = () => new SessionRecorder({ store, sessionId, runId: `r${runs++}`, actor });
        let recorder = fresh();
        for (let call = 0; !stop; call++) {
          try {
            const attempt = await recorder.beforeModelCall({ request: { call } });
            await recorder.modelCompleted(attempt, { ok: true });
            recorded++;
          } catch (error) {
            codes.add(LedgerError.isInstance(error) ? error.code : String(error));
            recorder = fresh();
          }
        }
      });
      for (let round = 0; round < 20; round++) {
        await new Promise((resolve) => setTimeout(resolve, 150));
        await admin?.query(
          "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
          [appName],
        );
      }
      stop = true;
      await Promise.all(agents);
      // What went wrong reached the callers as store errors, not as a dead process.
      for (const code of codes) expect(["store-unavailable", "conflict"]).toContain(code);
      const before = recorded;
      const recorder = new SessionRecorder({
        store,
        sessionId: `${sessionPrefix}-0`,
        runId: "after",
        actor: { type: "agent", id: "a" },
      });
      const attempt = await recorder.beforeModelCall({ request: { after: true } });
      await recorder.modelCompleted(attempt, { ok: true });
      expect(before).toBeGreaterThan(0);
      await store.close();
      await appPool?.end();
    }, 60_000);
  }
});
