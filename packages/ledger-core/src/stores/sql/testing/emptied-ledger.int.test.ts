import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../../events/ids.js";
import type { EventStore } from "../../../store/event-store.js";
import { SERVER_URLS, serverAvailable } from "../../../testing/servers.js";
import { MysqlEventStore } from "../../mysql/mysql-store.js";
import { PostgresEventStore } from "../../postgres/postgres-store.js";
import { emptiedEachTime, emptyMysqlDatabase, emptyPostgresSchema } from "./emptied-ledger.js";

// The conformance files hand every case the place emptiedEachTime gives: each must find the
// store as a new one, whatever the case before it wrote.

const mysqlAvailable = await serverAvailable("mysql");
const postgresAvailable = await serverAvailable("postgres");
const unique = () => `ledger_emptied_${uuidv7().replaceAll("-", "")}`;

/** Writes a row in every table a case can write: a run with a blob it names, and one put for a session. */
async function fill(store: EventStore): Promise<string[]> {
  await store.init();
  const named = await store.putBlob(`named ${uuidv7()}`);
  const claimed = await store.putBlob(`claimed ${uuidv7()}`, { sessionId: "other" });
  await store.append({
    sessionId: "s",
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started", evidenceRefs: [named] }],
  });
  await store.close();
  return [named, claimed];
}

/** What a new store shows: no session, and none of the blobs `refs` named. */
async function expectEmpty(store: EventStore, refs: string[]): Promise<void> {
  await store.init();
  expect((await store.listSessions()).sessions).toEqual([]);
  expect(await store.listRuns("s")).toEqual([]);
  for (const ref of refs)
    await expect(store.getBlob(ref)).rejects.toMatchObject({ code: "not-found" });
  await store.close();
}

describe.skipIf(!mysqlAvailable)("emptiedEachTime with emptyMysqlDatabase", () => {
  const admin = mysqlAvailable ? mysql.createConnection(SERVER_URLS.mysql) : undefined;
  const made: string[] = [];
  afterAll(async () => {
    const connection = await admin;
    for (const database of made) await connection?.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await connection?.end();
  });

  it("gives one database, made once, with no row left but schema_version's", async () => {
    const connection = (await admin) as mysql.Connection;
    const place = emptiedEachTime(
      async () => {
        const database = unique();
        made.push(database);
        await connection.query(`CREATE DATABASE \`${database}\``);
        return database;
      },
      (database) => emptyMysqlDatabase(connection, database),
    );
    const uri = (database: string) => {
      const url = new URL(SERVER_URLS.mysql);
      url.pathname = `/${database}`;
      return url.toString();
    };
    const database = await place();
    const refs = await fill(new MysqlEventStore({ uri: uri(database) }));
    const rows = async () => {
      const [tables] = (await connection.query(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ?",
        [database],
      )) as unknown as [{ name: string }[]];
      const counts: Record<string, number> = {};
      for (const { name } of tables) {
        const [[row]] = (await connection.query(
          `SELECT count(*) AS n FROM \`${database}\`.\`${name}\``,
        )) as unknown as [{ n: number }[]];
        counts[name] = Number(row?.n);
      }
      return counts;
    };
    const filled = await rows();
    expect(Object.values(filled).every((count) => count > 0)).toBe(true);
    expect(await place()).toBe(database);
    const emptied = await rows();
    expect(emptied).toEqual(
      Object.fromEntries(
        Object.keys(filled).map((name) => [name, name === "schema_version" ? filled[name] : 0]),
      ),
    );
    await expectEmpty(new MysqlEventStore({ uri: uri(database) }), refs);
    // No counter that outlives the rows (what DELETE would not reset).
    const [counters] = await connection.query(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = ? AND extra LIKE '%auto_increment%'",
      [database],
    );
    expect(counters).toEqual([]);
  });
});

describe.skipIf(!postgresAvailable)("emptiedEachTime with emptyPostgresSchema", () => {
  const admin = postgresAvailable
    ? new pg.Pool({ connectionString: SERVER_URLS.postgres, max: 1 })
    : undefined;
  const made: string[] = [];
  afterAll(async () => {
    for (const schema of made) await admin?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await admin?.end();
  });

  it("gives one schema, made once, with no row left but schema_version's", async () => {
    const pool = admin as pg.Pool;
    const place = emptiedEachTime(
      () => {
        const schema = unique();
        made.push(schema);
        return schema;
      },
      (schema) => emptyPostgresSchema(pool, schema),
    );
    const store = (schema: string) =>
      new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
    const schema = await place();
    const refs = await fill(store(schema));
    const rows = async () => {
      const { rows: tables } = await pool.query<{ name: string }>(
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = $1",
        [schema],
      );
      const counts: Record<string, number> = {};
      for (const { name } of tables) {
        const { rows: counted } = await pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM "${schema}"."${name}"`,
        );
        counts[name] = counted[0]?.n ?? -1;
      }
      return counts;
    };
    const filled = await rows();
    expect(Object.values(filled).every((count) => count > 0)).toBe(true);
    expect(await place()).toBe(schema);
    const emptied = await rows();
    expect(emptied).toEqual(
      Object.fromEntries(
        Object.keys(filled).map((name) => [name, name === "schema_version" ? filled[name] : 0]),
      ),
    );
    await expectEmpty(store(schema), refs);
    // No counter that outlives the rows (serial and identity columns own a sequence).
    const { rows: sequences } = await pool.query(
      "SELECT sequence_name FROM information_schema.sequences WHERE sequence_schema = $1",
      [schema],
    );
    expect(sequences).toEqual([]);
  });
});
