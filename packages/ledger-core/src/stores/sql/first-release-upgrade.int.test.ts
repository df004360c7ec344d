import mysql from "mysql2/promise";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import {
  checkInitWithoutUpgrade,
  checkNewerLedgerRefused,
} from "../../testing/init-without-upgrade.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { MysqlEventStore } from "../mysql/mysql-store.js";
import { PostgresEventStore } from "../postgres/postgres-store.js";
import { loadMigrations } from "./migrations.js";
import {
  checkFirstReleaseRace,
  checkFirstReleaseUpgraded,
  type FirstReleaseLedger,
  firstReleaseLedger,
} from "./testing/first-release.js";

// A database the first release made (migration 0000 only, applied from the shipped file) and
// filled the way its code wrote rows, opened by the current store.

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});
const places = freshPlaces((drop) => cleanups.push(drop));

const postgresAvailable = await serverAvailable("postgres");
const mysqlAvailable = await serverAvailable("mysql");

/**
 * Creates the first release's tables (migration 0000 of `dialect`, from the shipped file) and
 * fills them the way its code wrote rows, through `query`: a connection already in the fresh
 * schema or database.
 */
async function writeFirstRelease(
  dialect: "postgres" | "mysql",
  query: (sql: string, values?: unknown[]) => Promise<unknown>,
): Promise<FirstReleaseLedger> {
  const placeholders = (count: number) =>
    Array.from({ length: count }, (_, index) =>
      dialect === "postgres" ? `$${index + 1}` : "?",
    ).join(", ");
  const [first] = loadMigrations(dialect);
  for (const statement of first?.statements ?? []) await query(statement);
  await query(`INSERT INTO schema_version VALUES (${placeholders(2)}, 'then')`, [
    first?.version,
    first?.tag,
  ]);
  const ledger = await firstReleaseLedger();
  for (const event of ledger.events)
    await query(`INSERT INTO events VALUES (${placeholders(8)})`, [
      event.sessionId,
      event.commitCursor,
      event.runId,
      event.seq,
      event.eventId,
      event.type,
      event.recordedAt,
      JSON.stringify(event),
    ]);
  for (const run of ledger.runs)
    await query(`INSERT INTO runs VALUES (${placeholders(7)})`, [
      run.sessionId,
      run.runId,
      run.runLength,
      run.status,
      run.lastHash,
      run.parentRunId,
      run.startedAt,
    ]);
  for (const session of ledger.sessions)
    await query(`INSERT INTO sessions VALUES (${placeholders(4)})`, [
      session.sessionId,
      session.lastCursor,
      session.createdAt,
      session.updatedAt,
    ]);
  await query(`INSERT INTO blobs VALUES (${placeholders(2)})`, [
    ledger.blob.ref,
    ledger.blob.content,
  ]);
  return ledger;
}

/** A fresh PostgreSQL schema holding the first release's ledger. */
async function postgresFirstRelease(): Promise<{ schema: string; ledger: FirstReleaseLedger }> {
  const schema = places.schema("first");
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  cleanups.push(() => client.end());
  await client.query(`CREATE SCHEMA "${schema}"`);
  await client.query(`SET search_path TO "${schema}"`);
  const ledger = await writeFirstRelease("postgres", (sql, values) => client.query(sql, values));
  return { schema, ledger };
}

describe.skipIf(!postgresAvailable)("PostgresEventStore on a schema of the first release", () => {
  it("reads, verifies, resumes and appends its runs, and keeps the blobs its events name", async () => {
    const { schema, ledger } = await postgresFirstRelease();
    const store = new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema });
    await store.init();
    try {
      await checkFirstReleaseUpgraded(store, ledger);
    } finally {
      await store.close();
    }
  });
});

/** A fresh MySQL database holding the first release's ledger; returns its URL. */
async function mysqlFirstRelease(): Promise<{ url: string; ledger: FirstReleaseLedger }> {
  const { url } = await places.database("first").create();
  const admin = await mysql.createConnection({ uri: url });
  cleanups.push(() => admin.end());
  const ledger = await writeFirstRelease("mysql", (sql, values) => admin.query(sql, values));
  return { url, ledger };
}

/** The schema's tables, columns, functions and recorded versions, as an upgrade would change them. */
async function postgresSnapshot(schema: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
  await client.connect();
  try {
    const columns = await client.query(
      `SELECT c.relname, c.relkind, a.attname, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
         WHERE n.nspname = $1 ORDER BY c.relname, a.attname`,
      [schema],
    );
    const functions = await client.query(
      `SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
         WHERE n.nspname = $1 ORDER BY 1, 2`,
      [schema],
    );
    const versions = await client.query(
      `SELECT * FROM "${schema}".schema_version ORDER BY version`,
    );
    const events = await client.query(`SELECT count(*)::int AS n FROM "${schema}".events`);
    return {
      columns: columns.rows,
      functions: functions.rows,
      versions: versions.rows,
      events: events.rows,
    };
  } finally {
    await client.end();
  }
}

describe.skipIf(!postgresAvailable)(
  "PostgresEventStore.init({ upgrade: false }) on a schema of the first release",
  () => {
    it("refuses it and changes nothing, for its owner and for a role that may only read it; opens it once upgraded", async () => {
      const { schema } = await postgresFirstRelease();
      const reader = `ro_${uuidv7().replaceAll("-", "")}`;
      const admin = new pg.Client({ connectionString: SERVER_URLS.postgres });
      await admin.connect();
      cleanups.push(async () => {
        await admin.query(`DROP OWNED BY "${reader}"`).catch(() => undefined);
        await admin.query(`DROP ROLE IF EXISTS "${reader}"`);
        await admin.end();
      });
      await admin.query(`CREATE ROLE "${reader}" LOGIN PASSWORD 'reader-pw'`);
      await admin.query(`GRANT USAGE ON SCHEMA "${schema}" TO "${reader}"`);
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${reader}"`);
      const readerUrl = new URL(SERVER_URLS.postgres);
      readerUrl.username = reader;
      readerUrl.password = "reader-pw";
      const asReader = () =>
        new PostgresEventStore({ connectionString: readerUrl.toString(), schema });
      const latest = loadMigrations("postgres").length;
      const refused = asReader();
      await expect(refused.init({ create: false, upgrade: false })).rejects.toMatchObject({
        code: "invalid-argument",
        path: "$.upgrade",
        details: { found: 1, reads: latest },
      });
      await refused.close();
      await checkInitWithoutUpgrade({
        open: () => new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema }),
        snapshot: () => postgresSnapshot(schema),
        found: 1,
        reads: latest,
      });
      // Upgraded, the role that may only read opens it too (the new tables granted to it).
      await admin.query(`GRANT SELECT ON ALL TABLES IN SCHEMA "${schema}" TO "${reader}"`);
      const opened = asReader();
      await opened.init({ create: false, upgrade: false });
      expect((await opened.listSessions()).sessions.map((session) => session.sessionId)).toEqual([
        "old",
      ]);
      await opened.close();
    });
  },
);

describe.skipIf(!postgresAvailable)(
  "PostgresEventStore processes starting on a schema of the first release",
  () => {
    it("8 processes start on it at once: one migrates, none fails, and it is refused once newer", async () => {
      const { schema, ledger } = await postgresFirstRelease();
      await checkFirstReleaseRace(
        { kind: "postgres", location: SERVER_URLS.postgres, schema },
        ledger,
      );
      const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
      await client.connect();
      try {
        const versions = await client.query(
          `SELECT version FROM "${schema}".schema_version ORDER BY version`,
        );
        expect(versions.rows.map((row) => row.version)).toEqual(
          loadMigrations("postgres").map((migration) => migration.version),
        );
        await client.query(`INSERT INTO "${schema}".schema_version VALUES (99, 'future', 'now')`);
        await checkNewerLedgerRefused({
          open: () => new PostgresEventStore({ connectionString: SERVER_URLS.postgres, schema }),
          snapshot: () => postgresSnapshot(schema),
          found: 99,
          reads: loadMigrations("postgres").length,
        });
      } finally {
        await client.end();
      }
    });
  },
);

describe.skipIf(!postgresAvailable)("PostgresEventStore upgrading a large schema", () => {
  it("migrates under the application's statement_timeout: a migration is not one query", async () => {
    const { schema } = await postgresFirstRelease();
    const client = new pg.Client({ connectionString: SERVER_URLS.postgres });
    await client.connect();
    try {
      // 100k events of the first release naming blobs: the backfill of the reference index
      // reads them all, longer than the 100 ms the application allows one query.
      await client.query(
        `INSERT INTO "${schema}".events
         SELECT 'bulk-' || (n / 100), n % 100 + 1, 'r', n % 100, 'e' || n, 'x.bulk', 'then',
           '{"type":"x.bulk","evidenceRefs":["sha256:' || encode(sha256(n::text::bytea), 'hex') || '"]}'
         FROM generate_series(0, 99999) AS n`,
      );
    } finally {
      await client.end();
    }
    const url = new URL(SERVER_URLS.postgres);
    url.searchParams.set("options", "-c statement_timeout=100");
    const store = new PostgresEventStore({ connectionString: url.toString(), schema });
    try {
      await store.init();
      const refs = await store.readSession({ sessionId: "bulk-7" });
      expect(refs.events).toHaveLength(100);
    } finally {
      await store.close();
    }
  });
});

describe.skipIf(!mysqlAvailable)("MysqlEventStore on a database of the first release", () => {
  it("8 processes start on it at once: one migrates, none fails, and it is refused once newer", async () => {
    const { url, ledger } = await mysqlFirstRelease();
    await checkFirstReleaseRace({ kind: "mysql", location: url }, ledger);
    const client = await mysql.createConnection({ uri: url });
    try {
      const [versions] = (await client.query(
        "SELECT version FROM schema_version ORDER BY version",
      )) as unknown as [{ version: number }[]];
      expect(versions.map((row) => row.version)).toEqual(
        loadMigrations("mysql").map((migration) => migration.version),
      );
      await client.query("INSERT INTO schema_version VALUES (99, 'future', 'now')");
      await checkNewerLedgerRefused({
        open: () => new MysqlEventStore({ uri: url }),
        snapshot: () => mysqlSnapshot(url),
        found: 99,
        reads: loadMigrations("mysql").length,
      });
    } finally {
      await client.end();
    }
  });

  it("reads, verifies, resumes and appends its runs, and keeps the blobs its events name", async () => {
    const { url, ledger } = await mysqlFirstRelease();
    const store = new MysqlEventStore({ uri: url });
    await store.init();
    try {
      await checkFirstReleaseUpgraded(store, ledger);
    } finally {
      await store.close();
    }
  });
});

/** The database's tables, columns, indexes, routines and recorded versions. */
async function mysqlSnapshot(url: string): Promise<unknown> {
  const client = await mysql.createConnection({ uri: url });
  try {
    const read = async (sql: string) => ((await client.query(sql)) as unknown as [unknown[]])[0];
    return {
      columns: await read(
        `SELECT table_name, column_name, column_type FROM information_schema.columns
           WHERE table_schema = DATABASE() ORDER BY 1, 2`,
      ),
      indexes: await read(
        `SELECT table_name, index_name, column_name, seq_in_index FROM information_schema.statistics
           WHERE table_schema = DATABASE() ORDER BY 1, 2, 4`,
      ),
      routines: await read(
        "SELECT routine_name FROM information_schema.routines WHERE routine_schema = DATABASE() ORDER BY 1",
      ),
      versions: await read("SELECT * FROM schema_version ORDER BY version"),
      events: await read("SELECT count(*) AS n FROM events"),
    };
  } finally {
    await client.end();
  }
}

describe.skipIf(!mysqlAvailable)(
  "MysqlEventStore.init({ upgrade: false }) on a database of the first release",
  () => {
    it("refuses it and changes nothing; opens it once upgraded", async () => {
      const { url } = await mysqlFirstRelease();
      await checkInitWithoutUpgrade({
        open: () => new MysqlEventStore({ uri: url }),
        snapshot: () => mysqlSnapshot(url),
        found: 1,
        reads: loadMigrations("mysql").length,
      });
    });
  },
);

describe.skipIf(!mysqlAvailable)("MysqlEventStore upgrading a large database", () => {
  it("migrates under the application's max_statement_time: a migration is not one query", async () => {
    const { url } = await mysqlFirstRelease();
    const database = new URL(url).pathname.slice(1);
    const admin = await mysql.createConnection({ uri: url });
    try {
      // 100k events of the first release naming blobs: the backfill of the reference index
      // reads them all, longer than the 0.1 s the application allows one statement.
      await admin.query(
        `INSERT INTO events
         WITH d (i) AS (SELECT 0 UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3
           UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7
           UNION ALL SELECT 8 UNION ALL SELECT 9),
         n (i) AS (SELECT a.i + 10 * b.i + 100 * c.i + 1000 * e.i + 10000 * f.i
           FROM d a, d b, d c, d e, d f)
         SELECT CONCAT('bulk-', i DIV 100), i % 100 + 1, 'r', i % 100, CONCAT('e', i), 'x.bulk',
           'then', CONCAT('{"type":"x.bulk","evidenceRefs":["sha256:', SHA2(i, 256), '"]}')
         FROM n`,
      );
    } finally {
      await admin.end();
    }
    const pool = mysql.createPool({ uri: SERVER_URLS.mysql, connectionLimit: 2 });
    pool.on("connection", (connection) => {
      connection.query("SET SESSION max_statement_time = 0.1");
    });
    const store = new MysqlEventStore({ pool, database });
    try {
      await store.init();
      expect((await store.readSession({ sessionId: "bulk-7" })).events).toHaveLength(100);
    } finally {
      await store.close();
      await pool.end();
    }
  });
});
