import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { emptiedEachTime, emptyPostgresSchema } from "../sql/testing/emptied-ledger.js";
import { PostgresEventStore } from "./postgres-store.js";

// The store on pools configured the way applications configure them for their own queries.

const available = await serverAvailable("postgres");
const schemas: string[] = [];
const databases: string[] = [];
const pools: pg.Pool[] = [];
const admin = available ? new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 2 }) : null;

afterAll(async () => {
  for (const pool of pools) await pool.end();
  for (const schema of schemas) await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  for (const database of databases)
    await admin?.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
  await admin?.end();
});

function appPool(config: pg.PoolConfig, database?: string): pg.Pool {
  const url = new URL(SERVER_URLS.postgres);
  if (database !== undefined) url.pathname = `/${database}`;
  const pool = new pg.Pool({ connectionString: url.toString(), ...config });
  pool.on("error", () => {});
  pools.push(pool);
  return pool;
}

function freshSchema(): string {
  const schema = `ledger_byo_${uuidv7().replaceAll("-", "")}`;
  schemas.push(schema);
  return schema;
}

/**
 * The conformance suite's stores on `pool`, all in one schema: the first case's init() makes
 * its tables on this pool, and each later case finds their rows deleted (an empty store).
 */
function storesOn(pool: pg.Pool | undefined): () => Promise<PostgresEventStore> {
  const schema = emptiedEachTime(freshSchema, (name) =>
    emptyPostgresSchema(admin as pg.Pool, name),
  );
  return async () => new PostgresEventStore({ pool: pool as pg.Pool, schema: await schema() });
}

/** The settings of an application that reads int8 as BigInt and times its statements out. */
const appSettings: pg.PoolConfig = {
  application_name: "the-app",
  statement_timeout: 30_000,
  types: {
    getTypeParser: ((oid: number, format?: "text" | "binary") =>
      oid === 20 ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as never,
  },
};

/**
 * The two pools below run the suite at the same time (describe.concurrent), each in a schema
 * of its own, and each pool's cases one after another (describe.sequential): a case spends
 * most of its time waiting, on the server or on a grace period's clock (5.8 s of sleeps per
 * run of the suite), and the two waited in turn. Not the pools of the process-wide int8
 * parser, which would be the others' parser too while it ran.
 */
const oneCaseAtATime = { describe: describe.sequential, it };

describe.skipIf(!available)("PostgresEventStore on an application's pool", () => {
  describe.concurrent("int8 as BigInt, statement_timeout, application_name, its own search_path, max 1", () => {
    const pool = available
      ? appPool({ ...appSettings, max: 1, options: "-c search_path=app_elsewhere,public" })
      : undefined;
    runEventStoreConformance(storesOn(pool), oneCaseAtATime);
  });

  describe.concurrent("transactions SERIALIZABLE (default_transaction_isolation), max 4", () => {
    const pool = available
      ? appPool({ max: 4, options: "-c default_transaction_isolation=serializable" })
      : undefined;
    runEventStoreConformance(storesOn(pool), oneCaseAtATime);
  });
});

describe.skipIf(!available)("PostgresEventStore with int8 parsed as BigInt process-wide", () => {
  // pg.types.setTypeParser changes every query of the process, drizzle's included.
  const int8 = pg.types.getTypeParser(pg.types.builtins.INT8);
  beforeAll(() => pg.types.setTypeParser(pg.types.builtins.INT8, (value) => BigInt(value)));
  afterAll(() => pg.types.setTypeParser(pg.types.builtins.INT8, int8));
  const pool = available ? appPool({ max: 2 }) : undefined;
  runEventStoreConformance(storesOn(pool), { describe, it });
});

describe.skipIf(!available)("PostgresEventStore on a pool the application resets", () => {
  it("appends after the application ran DISCARD ALL or DEALLOCATE ALL on the shared connection", async () => {
    // One connection, so the application's reset lands on the one the store prepared on.
    const pool = appPool({ max: 1 });
    const store = new PostgresEventStore({ pool, schema: freshSchema() });
    await store.init();
    const sessionId = `s-${uuidv7()}`;
    const written = [];
    let seq = 0;
    for (const reset of [undefined, "DISCARD ALL", undefined, "DEALLOCATE ALL", undefined]) {
      if (reset !== undefined) await pool.query(reset);
      const { events } = await store.append({
        sessionId,
        runId: "r",
        expectedSeq: seq,
        events: [{ type: seq === 0 ? "run.started" : "input.received", payload: { seq } }],
      });
      seq += events.length;
      written.push(...events);
    }
    expect((await store.readSession({ sessionId })).events).toEqual(written);
    expect(written.map((event) => event.commitCursor)).toEqual([1, 2, 3, 4, 5]);
    await store.close();
  });
});

describe.skipIf(!available)(
  "PostgresEventStore reports the durability of the pool's commits",
  () => {
    it("describe() says synchronous_commit as the store's connections have it, read at init", async () => {
      for (const setting of ["off", "on"]) {
        const pool = appPool({ max: 1, options: `-c synchronous_commit=${setting}` });
        const store = new PostgresEventStore({ pool, schema: freshSchema() });
        await store.init();
        expect(store.describe().durability).toMatchObject({ synchronous_commit: setting });
        await store.close();
      }
    });
  },
);

describe("PostgresEventStore given something other than a pool", () => {
  it("refuses a pg.Client (the application's queries would run inside the store's transactions)", () => {
    const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
    expect(() => new PostgresEventStore({ pool: client as unknown as pg.Pool })).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$.pool" }),
    );
    expect(() => new PostgresEventStore({ pool: undefined as unknown as pg.Pool })).toThrow(
      expect.objectContaining({ code: "invalid-argument", path: "$.pool" }),
    );
  });
});

describe.skipIf(!available)(
  "PostgresEventStore on a pool whose transactions are SERIALIZABLE",
  () => {
    it("runs again a read the driver reports as a serialization failure (40001)", async () => {
      // What SERIALIZABLE does to a lone SELECT that read rows concurrent appends wrote (seen
      // in the conformance suite's races on such a pool, once in a while): 40001, nothing
      // done. The race cannot be made on demand, so the pool's first two reads answer it.
      const flaky = appPool({ max: 2, options: "-c default_transaction_isolation=serializable" });
      const store = new PostgresEventStore({ pool: flaky, schema: freshSchema() });
      await store.init();
      await store.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      const query = flaky.query.bind(flaky) as (...args: unknown[]) => Promise<unknown>;
      let cancelled = 0;
      (flaky as unknown as { query: unknown }).query = (...args: unknown[]) => {
        if (cancelled < 2) {
          cancelled++;
          const error = Object.assign(
            new Error(
              "could not serialize access due to read/write dependencies among transactions",
            ),
            { code: "40001" },
          );
          return Promise.reject(error);
        }
        return query(...args);
      };
      expect(await store.runHead({ sessionId: "s", runId: "r" })).toMatchObject({ length: 1 });
      expect(cancelled).toBe(2);
      await store.close();
    });
  },
);

describe.skipIf(!available)(
  "PostgresEventStore in public, on a pool whose search_path starts elsewhere",
  () => {
    it("keeps to its own tables in public and leaves the application's same-named tables alone", async () => {
      const database = `ledger_byo_${uuidv7().replaceAll("-", "")}`;
      databases.push(database);
      await admin?.query(`CREATE DATABASE "${database}"`);
      const pool = appPool(
        { ...appSettings, max: 2, options: "-c search_path=app,public" },
        database,
      );
      // The application's own schema, first in its search_path, has tables named like the ledger's.
      await pool.query("CREATE SCHEMA app");
      await pool.query("CREATE TABLE app.events (id serial PRIMARY KEY, note text)");
      await pool.query("CREATE TABLE app.sessions (session_id text PRIMARY KEY, owner text)");
      await pool.query("INSERT INTO app.sessions VALUES ('app-row', 'the app')");
      const store = new PostgresEventStore({ pool });
      await store.init();
      const sessionId = `s-${uuidv7()}`;
      const first = await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      const ref = await store.putBlob("evidence");
      const second = await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 1,
        events: [{ type: "input.received", payload: { n: 1 }, evidenceRefs: [ref] }],
      });
      const closed = await store.append({
        sessionId,
        runId: "r",
        expectedSeq: 2,
        events: [{ type: "run.completed" }],
      });
      const written = [...first.events, ...second.events, ...closed.events];
      expect((await store.readSession({ sessionId })).events).toEqual(written);
      expect((await store.readRun({ sessionId, runId: "r" })).events).toEqual(written);
      expect((await store.runHead({ sessionId, runId: "r" })).length).toBe(3);
      expect((await store.listRuns(sessionId)).map((run) => run.runId)).toEqual(["r"]);
      expect((await store.listSessions()).sessions.map((s) => s.sessionId)).toEqual([sessionId]);
      expect(new TextDecoder().decode(await store.getBlob(ref))).toBe("evidence");
      const deleted = await store.deleteSession(sessionId, { blobGraceMs: 0 });
      expect(deleted.deletedEvents).toBe(3);
      expect((await store.listSessions()).sessions).toEqual([]);
      await store.close();
      const appEvents = await pool.query("SELECT count(*)::int AS n FROM app.events");
      expect(appEvents.rows).toEqual([{ n: 0 }]);
      const appSessions = await pool.query("SELECT session_id, owner FROM app.sessions");
      expect(appSessions.rows).toEqual([{ session_id: "app-row", owner: "the app" }]);
    });
  },
);

describe.skipIf(!available)("PostgresEventStore on a pool the application has ended", () => {
  it("says why in store-unavailable, not which statement with which parameters", async () => {
    const pool = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 1 });
    const store = new PostgresEventStore({ pool, schema: freshSchema() });
    await store.init();
    await pool.end();
    const secret = "a blob the log must not hold";
    for (const call of [
      () => store.putBlob(secret),
      () => store.listSessions(),
      () => store.readRun({ sessionId: "s", runId: "r" }),
    ]) {
      const error = await call().then(
        () => undefined,
        (failure: unknown) => failure as Error,
      );
      expect(error).toMatchObject({ code: "store-unavailable" });
      expect(error?.message).toContain("Cannot use a pool after calling end");
      expect(error?.message).not.toContain("Failed query");
      expect(error?.message).not.toContain(secret);
    }
  });
});
