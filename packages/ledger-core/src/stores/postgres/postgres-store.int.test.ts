import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../../events/canonical.js";
import { uuidv7 } from "../../events/ids.js";
import type { NewEvent } from "../../events/types.js";
import { openStore } from "../../store/open-store.js";
import { checkInitWithoutCreate } from "../../testing/init-without-create.js";
import { checkLargeBatch } from "../../testing/large-batch.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { checkSharedHandles } from "../../testing/shared-handles.js";
import { appendThroughUrl } from "../sql/testing/append-through-url.js";
import { PostgresBackend } from "./postgres-backend.js";
import { PostgresEventStore } from "./postgres-store.js";

const available = await serverAvailable("postgres");
const schema = `ledger_store_${uuidv7().replaceAll("-", "")}`;
const pool = available
  ? new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 3 })
  : undefined;
/** The test server's URL naming `name` as the ledger's schema, written out by hand. */
const withSchema = (name: string) =>
  `${SERVER_URLS.postgres}${SERVER_URLS.postgres.includes("?") ? "&" : "?"}schema=${name}`;
afterAll(async () => {
  await pool?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await pool?.end();
});

describe.skipIf(!available)("PostgresEventStore", () => {
  it("two stores on one schema (two processes) answer random sequences as the reference does, and racing writers through both lose nothing", async () => {
    // Each caches the run heads of its own appends: the other's commits must show.
    const shared = `${schema}_two`;
    const handles = [1, 2].map(
      () => new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema: shared }),
    );
    try {
      await checkSharedHandles(handles);
    } finally {
      await pool?.query(`DROP SCHEMA IF EXISTS "${shared}" CASCADE`);
    }
  });

  it("init({ create: false }) makes no schema where there is no ledger, and opens one that is there", async () => {
    const own = `${schema}_ro`;
    try {
      await checkInitWithoutCreate({
        open: () => new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema: own }),
        leftovers: async () =>
          (await (pool as pg.Pool).query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [own]))
            .rowCount ?? 0,
      });
    } finally {
      await pool?.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
    }
  });

  it("opens through openStore(postgres://...?schema=), in that schema", async () => {
    const own = `${schema}_url`;
    const url = withSchema(own);
    try {
      const { sessionId, description } = await appendThroughUrl(url);
      expect(description).toMatchObject({ kind: "postgres", location: url });
      const rows = await (pool as pg.Pool).query(
        `SELECT count(*)::int AS n FROM "${own}".events WHERE session_id = $1`,
        [sessionId],
      );
      expect(rows.rows).toEqual([{ n: 1 }]);
      // The option wins over the URL, as keyPrefix does on Redis.
      const byOption = new PostgresEventStore({ connectionString: url, schema });
      expect(byOption.describe().location).toBe(withSchema(schema));
      await byOption.close();
    } finally {
      await pool?.query(`DROP SCHEMA IF EXISTS "${own}" CASCADE`);
    }
  });

  it("refuses a schema in the URL that PostgreSQL would cut or keep for itself, before connecting", async () => {
    for (const name of ["x".repeat(64), "é".repeat(32), "pg_ledger", "%00"])
      await expect(openStore(withSchema(name), { init: false })).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.url",
      });
    for (const name of ["", "a\u0000b", "lone\uD800"])
      expect(
        () => new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema: name }),
      ).toThrow(expect.objectContaining({ code: "invalid-argument", path: "$.schema" }));
  });

  it("two inits of a new schema at once, on connections that made another ledger before, both succeed", async () => {
    // Connections that have run an init hold catalog entries that an advisory lock's wait
    // does not refresh: the second init used to fail on pg_namespace's unique index.
    const warm = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 2 });
    const [first, second] = [`${schema}_warm`, `${schema}_race`];
    try {
      const before = new PostgresEventStore({ pool: warm, schema: first });
      await Promise.all([before.init(), before.init()]);
      expect(warm.totalCount).toBe(2);
      const store = new PostgresEventStore({ pool: warm, schema: second });
      await Promise.all([store.init(), store.init()]);
      await store.append({
        sessionId: "s",
        runId: "r",
        expectedSeq: 0,
        events: [{ type: "input.received", payload: {} }],
      });
      const { rows } = await warm.query<{ n: string }>(
        `SELECT count(*) AS n FROM "${second}".schema_version`,
      );
      expect(Number(rows[0]?.n)).toBeGreaterThan(0);
    } finally {
      for (const name of [first, second])
        await warm.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
      await warm.end();
    }
  });

  it("takes any schema name PostgreSQL keeps: quotes, dashes, dots, capitals and spaces are quoted, never spliced", async () => {
    const name = `Agent-Ledger "v1.2" it's;${uuidv7().slice(-8)}`;
    const quoted = `"${name.replaceAll('"', '""')}"`;
    try {
      const store = new PostgresEventStore({ pool: pool as pg.Pool, schema: name });
      await Promise.all([store.init(), store.init()]);
      const events: NewEvent[] = [{ type: "input.received", payload: { text: "hi" } }];
      await store.append({ sessionId: "s", runId: "r", expectedSeq: 0, events });
      await store.append({ sessionId: "s", runId: "r", expectedSeq: 1, events });
      expect((await store.readSession({ sessionId: "s" })).events.map((e) => e.seq)).toEqual([
        0, 1,
      ]);
      await store.close();
      const { rows } = await (pool as pg.Pool).query<{ n: string }>(
        `SELECT COUNT(*) AS n FROM ${quoted}.events`,
      );
      expect(Number(rows[0]?.n)).toBe(2);
    } finally {
      await pool?.query(`DROP SCHEMA IF EXISTS ${quoted} CASCADE`);
    }
  });

  it("uses the application's pool, keeps TEXT verbatim, and leaves the pool open", async () => {
    const store = new PostgresEventStore({ pool: pool as pg.Pool, schema });
    await Promise.all([store.init(), store.init()]);
    const payload = { text: "nul\u0000 emoji 😀", z: 1, a: { y: [1.5, "x"] } };
    const { events } = await store.append({
      sessionId: "s",
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "input.received", payload }],
    });
    await store.close();
    const result = await (pool as pg.Pool).query<{ body: string }>(
      `SELECT body FROM "${schema}".events`,
    );
    expect(result.rows[0]?.body).toBe(JSON.stringify(events[0]));
    const versions = await (pool as pg.Pool).query(
      `SELECT version FROM "${schema}".schema_version`,
    );
    expect(versions.rows).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
      { version: 7 },
      { version: 8 },
    ]);
    // The batch append functions live in the store's schema, not in the search path's first.
    const functions = await (pool as pg.Pool).query<{ name: string }>(
      "SELECT p.proname AS name FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname LIKE 'agent_ledger_append%' AND n.nspname = $1 ORDER BY 1",
      [schema],
    );
    expect(functions.rows).toEqual([
      { name: "agent_ledger_append_at_heads" },
      { name: "agent_ledger_append_blobs_at_heads" },
    ]);
  });

  it("puts a few blobs and their claims in one statement; only a batch put skips its own WAL flush", async () => {
    const own = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 2 });
    const store = new PostgresEventStore({ pool: own, schema });
    try {
      await store.init();
      const sent: string[] = [];
      const query = own.query.bind(own) as (...args: unknown[]) => Promise<unknown>;
      (own as unknown as { query: unknown }).query = (...args: unknown[]) => {
        const first = args[0] as string | { text: string };
        sent.push(typeof first === "string" ? first : first.text);
        return query(...args);
      };
      const sessionId = `put-${uuidv7()}`;
      const refs = await store.putBlobs?.(
        ["one", "two", "three"].map((x) => `${x} ${uuidv7()}`),
        {
          sessionId,
        },
      );
      // The blobs and the claims together, committed asynchronously: the append that names
      // them commits after, and its WAL flush covers this commit's records.
      expect(sent).toHaveLength(1);
      expect(sent[0]).toMatch(/set_config\('synchronous_commit', 'off', true\)/);
      sent.length = 0;
      await store.putBlob(`single ${uuidv7()}`, { sessionId });
      expect(sent).toHaveLength(1);
      expect(sent[0]).not.toMatch(/synchronous_commit/);
      const claims = await (pool as pg.Pool).query<{ blob_ref: string }>(
        `SELECT blob_ref FROM "${schema}".blob_refs WHERE session_id = $1 ORDER BY blob_ref`,
        [sessionId],
      );
      expect(claims.rows.map((row) => row.blob_ref)).toEqual(
        expect.arrayContaining([...(refs ?? [])]),
      );
      expect(claims.rows).toHaveLength(4);
    } finally {
      await store.close();
      await own.end();
    }
  });

  it("upgrades a version-2 schema: the batch function is created, old rows read, batches write", async () => {
    const old = `ledger_upgrade_${uuidv7().replaceAll("-", "")}`;
    const client = pool as pg.Pool;
    // Watched before the upgraded store is made: a store binds the method when constructed.
    const batches = vi.spyOn(PostgresBackend.prototype, "appendAtHeads");
    try {
      const first = new PostgresEventStore({ pool: client, schema: old });
      await first.init();
      const before = await first.append({
        sessionId: "s",
        runId: "r0",
        expectedSeq: 0,
        events: [{ type: "run.started" }],
      });
      await first.close();
      // What a database written by the previous release looks like: no function, version 2.
      await client.query(`DROP FUNCTION "${old}".agent_ledger_append_at_heads`);
      await client.query(`DROP FUNCTION "${old}".agent_ledger_append_blobs_at_heads`);
      await client.query(`DROP INDEX "${old}".blob_refs_session`);
      await client.query(`DROP INDEX "${old}".sessions_code_point`);
      await client.query(`DELETE FROM "${old}".schema_version WHERE version >= 3`);
      const upgraded = new PostgresEventStore({ pool: client, schema: old });
      await Promise.all([upgraded.init(), upgraded.init()]);
      const versions = await client.query(`SELECT version FROM "${old}".schema_version`);
      expect(versions.rows).toEqual([
        { version: 1 },
        { version: 2 },
        { version: 3 },
        { version: 4 },
        { version: 5 },
        { version: 6 },
        { version: 7 },
        { version: 8 },
      ]);
      // Five runs of one session at once: the first statement starts alone, four go out together
      // through the function the upgrade created.
      const runs = ["r1", "r2", "r3", "r4", "r5"];
      for (const runId of runs)
        await upgraded.append({
          sessionId: "s",
          runId,
          expectedSeq: 0,
          events: [{ type: "run.started" }],
        });
      // r3's append carries a blob it names: the function stores and claims it.
      const content = `carried ${uuidv7()}`;
      const ref = `sha256:${sha256Hex(content)}`;
      await Promise.all(
        runs.map((runId) =>
          upgraded.append({
            sessionId: "s",
            runId,
            expectedSeq: 1,
            events: [{ type: "x.step", ...(runId === "r3" ? { evidenceRefs: [ref] } : {}) }],
            ...(runId === "r3" ? { blobs: [content] } : {}),
          }),
        ),
      );
      // The four went through the function, and it wrote every one (a cursor for each), not
      // the transactional path after it answered nothing.
      const answers = await Promise.all(
        batches.mock.results.slice(-2).map((result) => result.value),
      );
      expect(batches.mock.calls.slice(-2).map(([appends]) => appends.length)).toEqual([1, 4]);
      expect(answers[1]).toEqual([
        expect.any(Number),
        expect.any(Number),
        expect.any(Number),
        expect.any(Number),
      ]);
      const calls = await client.query<{ calls: string }>(
        `SELECT count(*) AS calls FROM "${old}".events WHERE event_type = 'x.step'`,
      );
      expect(Number(calls.rows[0]?.calls)).toBe(5);
      expect(new TextDecoder().decode(await upgraded.getBlob(ref))).toBe(content);
      const claims = await client.query(
        `SELECT session_id FROM "${old}".blob_refs WHERE blob_ref = $1`,
        [ref],
      );
      expect(claims.rows).toEqual([{ session_id: "s" }]);
      const session = (await upgraded.readSession({ sessionId: "s" })).events;
      expect(session[0]).toEqual(before.events[0]);
      expect(session.map((event) => event.commitCursor)).toEqual(
        Array.from({ length: 11 }, (_, index) => index + 1),
      );
      await upgraded.close();
    } finally {
      batches.mockRestore();
      await client.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`);
    }
  });

  it("upgrades a version-7 schema from two processes at once: 0005's blob function is replaced by 0007's, which stamps blobs after their locks", async () => {
    const old = `ledger_upgrade_${uuidv7().replaceAll("-", "")}`;
    const client = pool as pg.Pool;
    try {
      const first = new PostgresEventStore({ pool: client, schema: old });
      await first.init();
      await first.close();
      // What the previous release left: 0005's function, version 7.
      const shipped = readFileSync(
        new URL("../../../drizzle/postgres/0005_append_at_heads_with_blobs.sql", import.meta.url),
        "utf8",
      );
      const setup = await client.connect();
      try {
        await setup.query("BEGIN");
        await setup.query(`SET LOCAL search_path TO "${old}"`);
        await setup.query("DROP FUNCTION agent_ledger_append_blobs_at_heads");
        await setup.query(shipped);
        await setup.query("DELETE FROM schema_version WHERE version = 8");
        await setup.query("COMMIT");
      } finally {
        setup.release();
      }
      const body = async () =>
        (
          await client.query<{ body: string }>(
            "SELECT p.prosrc AS body FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = 'agent_ledger_append_blobs_at_heads' AND n.nspname = $1",
            [old],
          )
        ).rows.map((row) => row.body);
      expect((await body())[0]).not.toContain("FOR UPDATE");
      const upgraded = [1, 2].map(() => new PostgresEventStore({ pool: client, schema: old }));
      await Promise.all(upgraded.map((store) => store.init()));
      await Promise.all(upgraded.map((store) => store.close()));
      const versions = await client.query(
        `SELECT version FROM "${old}".schema_version WHERE version >= 7 ORDER BY 1`,
      );
      expect(versions.rows).toEqual([{ version: 7 }, { version: 8 }]);
      // One function of the name, the new body.
      const bodies = await body();
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toContain("FOR UPDATE");
    } finally {
      await client.query(`DROP SCHEMA IF EXISTS "${old}" CASCADE`);
    }
  });

  it("writes one batch of 10,000 events to a new run, and forks it, within the 65,535 bind parameters of a statement", async () => {
    // One multi-row INSERT of 10,000 events bound 80,000 values: the server refused it ("bind
    // message has 14464 parameter formats but 0 parameters") as store-unavailable.
    const store = new PostgresEventStore({ pool: pool as pg.Pool, schema });
    await store.init();
    await checkLargeBatch(store, 10_000);
    await store.close();
  }, 60_000);

  it("gathered appends whose blobs pass one statement's 16 MiB together go one after the other, each in its one statement", async () => {
    // Watched before the store is made: a store binds the method when constructed.
    const batches = vi.spyOn(PostgresBackend.prototype, "appendAtHeads");
    const programs = vi.spyOn(PostgresBackend.prototype, "write");
    const singles = vi.spyOn(PostgresBackend.prototype, "appendAtHead");
    const store = new PostgresEventStore({ pool: pool as pg.Pool, schema });
    try {
      await store.init();
      const sessionId = `large-${uuidv7()}`;
      const runs = ["a", "b", "c"];
      for (const runId of runs)
        await store.append({ sessionId, runId, expectedSeq: 0, events: [{ type: "run.started" }] });
      programs.mockClear();
      // 9 MiB each, of bytes that do not deflate: b's and c's go out together, 18 MiB.
      const contents = runs.map(() => randomBytes(9 << 20));
      const refs = contents.map((content) => `sha256:${sha256Hex(content)}`);
      const answers = await Promise.all(
        runs.map((runId, index) =>
          store.append({
            sessionId,
            runId,
            expectedSeq: 1,
            events: [{ type: "x.named", evidenceRefs: [refs[index] as string] }],
            blobs: [contents[index] as Buffer],
          }),
        ),
      );
      expect(answers.map((answer) => answer.deduplicated)).toEqual([false, false, false]);
      expect(batches.mock.calls.map(([appends]) => appends.length)).toContain(2);
      expect(singles.mock.calls.map(([append]) => append.runId).sort()).toEqual(runs);
      expect(programs).not.toHaveBeenCalled();
      for (const [index, ref] of refs.entries())
        expect(Buffer.from(await store.getBlob(ref)).equals(contents[index] as Buffer)).toBe(true);
      const cursors = (await store.readSession({ sessionId })).events.map((e) => e.commitCursor);
      expect(cursors).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      batches.mockRestore();
      programs.mockRestore();
      singles.mockRestore();
      await store.close();
    }
  }, 60_000);

  it("puts 22,000 blobs in one putBlobs call: the INSERTs stay within 65,535 bind parameters", async () => {
    // Three values a blob in one INSERT: refused as store-unavailable ("bind message has ...").
    const store = new PostgresEventStore({ pool: pool as pg.Pool, schema });
    await store.init();
    const contents = Array.from({ length: 22_000 }, (_, index) => `blob ${index} ${uuidv7()}`);
    const refs = await store.putBlobs(contents);
    const found = await store.getBlobs(refs);
    expect(found.size).toBe(22_000);
    expect(new TextDecoder().decode(found.get(refs[21_999] as string))).toBe(contents[21_999]);
    await store.close();
  }, 60_000);
});
