import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import type { NewEvent } from "../../events/types.js";
import type { EventStore } from "../../store/event-store.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { PostgresEventStore } from "../postgres/postgres-store.js";
import { SqliteEventStore } from "../sqlite/sqlite-store.js";

// Retention reads the session's refs from the blob reference index, on the server: deleting a
// session of many large events brings back a few counts, never its event bodies (a 200 MB
// session once raised the client's memory by 420 MB).

const EVENTS = 400;
const postgres = await serverAvailable("postgres");
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/**
 * A closed session of `EVENTS` events of 2 KB that names three blobs (one also named by another
 * session), deleted with no grace; checks the counts and returns the rows read meanwhile.
 */
async function rowsReadByDeletion(
  store: EventStore,
  rowsRead: () => number,
  around: { before(): void; after(): void } = { before() {}, after() {} },
): Promise<number> {
  const sessionId = `big-${uuidv7()}`;
  const own = await store.putBlob("own");
  const other = await store.putBlob("other");
  const shared = await store.putBlob("shared");
  const filler = "x".repeat(2048);
  const events: NewEvent[] = Array.from({ length: EVENTS - 2 }, (_, index) => ({
    type: "x.note",
    payload: { index, filler },
    ...(index === 7 ? { evidenceRefs: [own, shared] } : {}),
    ...(index === 300 ? { evidenceRefs: [other, own] } : {}),
  }));
  await store.append({
    sessionId,
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started" }, ...events, { type: "run.completed" }],
  });
  await store.append({
    sessionId: `keeper-${uuidv7()}`,
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started", evidenceRefs: [shared] }],
  });
  const before = rowsRead();
  around.before();
  const deleted = await store.deleteSession(sessionId, { blobGraceMs: 0 });
  around.after();
  const read = rowsRead() - before;
  expect(deleted).toEqual({
    sessionId,
    deletedEvents: EVENTS,
    deletedRuns: 1,
    deletedBlobs: 2,
    keptBlobs: 1,
  });
  for (const gone of [own, other])
    await expect(store.getBlob(gone)).rejects.toMatchObject({ code: "not-found" });
  expect(new TextDecoder().decode(await store.getBlob(shared))).toBe("shared");
  return read;
}

describe("deleteSession reads counts, not the session's events", () => {
  it("SQLite", async () => {
    const folder = mkdtempSync(join(tmpdir(), "ledger-retention-reads-"));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    const database = new Database(join(folder, "ledger.db"));
    cleanups.push(() => {
      database.close();
    });
    // Every row a statement of this connection returns is counted, and every statement run
    // is remembered.
    let rows = 0;
    const ran = new Set<string>();
    const prepare = database.prepare.bind(database);
    database.prepare = ((source: string) => {
      const statement = prepare(source);
      const all = statement.all.bind(statement);
      const get = statement.get.bind(statement);
      const run = statement.run.bind(statement);
      statement.all = (...args: unknown[]) => {
        const found = all(...args);
        ran.add(source);
        rows += found.length;
        return found;
      };
      statement.get = (...args: unknown[]) => {
        const found = get(...args);
        ran.add(source);
        if (found !== undefined) rows++;
        return found;
      };
      statement.run = (...args: unknown[]) => {
        ran.add(source);
        return run(...args);
      };
      return statement;
    }) as typeof database.prepare;
    const store = new SqliteEventStore({ database });
    await store.init();
    let deletion: string[] = [];
    const around = {
      before: () => ran.clear(),
      after: () => {
        deletion = [...ran].filter((source) => !/^\s*(BEGIN|COMMIT|PRAGMA)/i.test(source));
      },
    };
    expect(await rowsReadByDeletion(store, () => rows, around)).toBeLessThan(10);
    // And each of the deletion's statements finds its rows by an index: a SCAN of a table
    // (blob_refs has one row per session and blob it names) grows with the whole ledger.
    expect(deletion.some((source) => source.includes("blob_refs"))).toBe(true);
    for (const source of deletion) {
      const params = source.match(/\?/g)?.length ?? 0;
      const plan = prepare(`EXPLAIN QUERY PLAN ${source}`).all(
        ...Array.from({ length: params }, () => "x"),
      ) as { detail: string }[];
      expect({ source, scans: plan.filter((step) => step.detail.startsWith("SCAN")) }).toEqual({
        source,
        scans: [],
      });
    }
    await store.close();
  });

  it.skipIf(!postgres)("PostgreSQL", async () => {
    const schema = `ledger_reads_${uuidv7().replaceAll("-", "")}`;
    const pool = new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 2 });
    cleanups.push(async () => {
      await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await pool.end();
    });
    // Every row the server sends this pool's clients is counted.
    let rows = 0;
    pool.on("connect", (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const result = query(...args);
        if (result instanceof Promise)
          result.then(
            (done: { rows?: unknown[] } | { rows?: unknown[] }[]) => {
              for (const part of Array.isArray(done) ? done : [done])
                rows += part?.rows?.length ?? 0;
            },
            () => {},
          );
        return result;
      };
    });
    const store = new PostgresEventStore({ pool, schema });
    await store.init();
    expect(await rowsReadByDeletion(store, () => rows)).toBeLessThan(10);
    await store.close();
  });
});
