import callbackMysql from "mysql2";
import mysql from "mysql2/promise";
import { afterAll, describe, expect, it } from "vitest";
import { uuidv7 } from "../../events/ids.js";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { freshPlaces } from "../../testing/fresh-places.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { emptiedEachTime, emptyMysqlDatabase } from "../sql/testing/emptied-ledger.js";
import { MysqlEventStore } from "./mysql-store.js";

// The store on pools configured the way applications configure them for their own queries.

const available = await serverAvailable("mysql");
const places = freshPlaces(afterAll);
const pools: mysql.Pool[] = [];
const admin = available ? await mysql.createConnection(SERVER_URLS.mysql) : undefined;

afterAll(async () => {
  for (const pool of pools) await pool.end();
  await admin?.end();
});

/** The server's URL with no database selected. */
function serverUri(): string {
  const url = new URL(SERVER_URLS.mysql);
  url.pathname = "/";
  return url.toString();
}

/** A pool with the application's options; `sqlMode` is set on each new connection, as apps do. */
function appPool(options: mysql.PoolOptions, sqlMode?: string): mysql.Pool {
  const pool = mysql.createPool({ uri: serverUri(), ...options });
  if (sqlMode !== undefined)
    pool.pool.on("connection", (connection) => {
      connection.query(`SET SESSION sql_mode = '${sqlMode}'`);
    });
  pools.push(pool);
  return pool;
}

const freshDatabase = async () => (await places.database("byo").create()).database;

/**
 * The conformance suite's stores on `pool`, all in one database: the first case's init() makes
 * its tables on this pool, and each later case finds their rows deleted (an empty store).
 */
function storesOn(pool: mysql.Pool | undefined): () => Promise<MysqlEventStore> {
  const database = emptiedEachTime(freshDatabase, (name) =>
    emptyMysqlDatabase(admin as mysql.Connection, name),
  );
  return async () => new MysqlEventStore({ pool: pool as mysql.Pool, database: await database() });
}

/** Options applications set for their own rows; none of them may change what the ledger reads. */
const appOptions: mysql.PoolOptions = {
  rowsAsArray: true,
  namedPlaceholders: true,
  dateStrings: true,
  supportBigNumbers: true,
  bigNumberStrings: true,
  decimalNumbers: true,
  typeCast: (field, next) => (field.type === "TINY" ? field.string() === "1" : next()),
  multipleStatements: false,
  connectionLimit: 1,
  // COM_RESET_CONNECTION on every release: session state and prepared statements are dropped.
  resetOnRelease: true,
};

/**
 * The three pools below run the suite at the same time (describe.concurrent), each in a
 * database of its own, and each pool's cases one after another (describe.sequential): a case
 * spends most of its time waiting, on the server or on a grace period's clock (5.8 s of
 * sleeps per run of the suite), and the three waited in turn.
 */
const oneCaseAtATime = { describe: describe.sequential, it };

describe.skipIf(!available)("MysqlEventStore on an application's pool", () => {
  describe.concurrent("rowsAsArray, namedPlaceholders, big numbers as strings, typeCast, one connection reset on release, no database in the URL", () => {
    const pool = available ? appPool(appOptions) : undefined;
    runEventStoreConformance(storesOn(pool), oneCaseAtATime);
  });

  describe.concurrent("connections without the MULTI_RESULTS capability (flags: -MULTI_RESULTS), rows nested by table with a separator (nestTables: '_')", () => {
    // MariaDB's one-statement append answers with a result set from inside a compound block,
    // which the server refuses on such a connection: the store writes the transactional way.
    const pool = available
      ? appPool({ connectionLimit: 2, flags: ["-MULTI_RESULTS"], nestTables: "_" })
      : undefined;
    runEventStoreConformance(storesOn(pool), oneCaseAtATime);
  });

  describe.concurrent("sql_mode ANSI (ANSI_QUOTES, PIPES_AS_CONCAT), rows nested by table (nestTables: true)", () => {
    // mysql2 nests every statement's rows that does not say otherwise, drizzle's too: its
    // arrays read as nulls, and the first append wrote a NaN cursor.
    const pool = available
      ? appPool({ connectionLimit: 2, nestTables: true }, "ANSI,STRICT_TRANS_TABLES")
      : undefined;
    runEventStoreConformance(storesOn(pool), oneCaseAtATime);
  });
});

describe.skipIf(!available)("MysqlEventStore on a pool whose connections switch databases", () => {
  it("keeps to the pool's database after the application ran USE on a pooled connection", async () => {
    const ledger = await freshDatabase();
    const tenant = await freshDatabase();
    const url = new URL(serverUri());
    url.pathname = `/${ledger}`;
    const pool = mysql.createPool({ uri: url.toString(), connectionLimit: 1 });
    pools.push(pool);
    const store = new MysqlEventStore({ pool });
    await store.init();
    const sessionId = `s-${uuidv7()}`;
    const first = await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    // A multi-tenant application switches its (one) pooled connection to a tenant's database.
    const connection = await pool.getConnection();
    await connection.query(`USE \`${tenant}\``);
    connection.release();
    const second = await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 1,
      events: [{ type: "input.received", payload: { n: 1 } }],
    });
    const ref = await store.putBlob("evidence");
    expect((await store.readSession({ sessionId })).events).toEqual([
      ...first.events,
      ...second.events,
    ]);
    expect(new TextDecoder().decode(await store.getBlob(ref))).toBe("evidence");
    const [tables] = await (admin as mysql.Connection).query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
      [tenant],
    );
    expect(tables).toEqual([]);
    await store.close();
  });
});

describe.skipIf(!available)("MysqlEventStore refuses a pool it would misread or corrupt", () => {
  /** init() refuses with invalid-argument naming `path`, and leaves the database empty. */
  async function refused(pool: mysql.Pool, path: string, message: RegExp, database?: string) {
    const store = new MysqlEventStore({
      pool,
      ...(database === undefined ? {} : { database }),
    });
    await expect(store.init()).rejects.toMatchObject({ code: "invalid-argument", path, message });
    await store.close();
    if (database !== undefined) {
      const [tables] = await (admin as mysql.Connection).query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = ?",
        [database],
      );
      expect(tables).toEqual([]);
    }
  }

  it("a connection character set other than utf8mb4 (ids and bodies would lose characters)", async () => {
    for (const charset of ["latin1", "utf8"]) {
      const pool = appPool({ charset, connectionLimit: 1 });
      await refused(pool, "$.pool", /utf8mb4/, await freshDatabase());
    }
  });

  it("utf8mb4 in the driver but SET NAMES latin1 on each connection", async () => {
    const pool = appPool({ connectionLimit: 1 });
    pool.pool.on("connection", (connection) => {
      connection.query("SET NAMES latin1");
    });
    await refused(pool, "$.pool", /utf8mb4/, await freshDatabase());
  });

  it("sql_mode NO_BACKSLASH_ESCAPES (the driver escapes quotes with backslashes)", async () => {
    const pool = appPool({ connectionLimit: 1 }, "NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES");
    await refused(pool, "$.pool", /NO_BACKSLASH_ESCAPES/, await freshDatabase());
  });

  it("autocommit off on each connection (the store's plain writes would never commit)", async () => {
    const pool = appPool({ connectionLimit: 1 });
    pool.pool.on("connection", (connection) => {
      connection.query("SET autocommit = 0");
    });
    await refused(pool, "$.pool", /autocommit/, await freshDatabase());
  });

  it("no database in the pool's URL and none in the options", async () => {
    const pool = appPool({ connectionLimit: 1 });
    await refused(pool, "$.database", /no database/);
  });
});

describe.skipIf(!available)("MysqlEventStore given something other than a promise pool", () => {
  it("refuses a callback pool (naming pool.promise()) and a single connection", async () => {
    const callbackPool = callbackMysql.createPool({ uri: serverUri(), connectionLimit: 1 });
    const connection = await mysql.createConnection(serverUri());
    try {
      expect(
        () => new MysqlEventStore({ pool: callbackPool as unknown as mysql.Pool, database: "x" }),
      ).toThrow(
        expect.objectContaining({
          code: "invalid-argument",
          path: "$.pool",
          message: expect.stringMatching(/promise\(\)/),
        }),
      );
      expect(
        () => new MysqlEventStore({ pool: connection as unknown as mysql.Pool, database: "x" }),
      ).toThrow(expect.objectContaining({ code: "invalid-argument", path: "$.pool" }));
    } finally {
      await connection.end();
      await new Promise((resolve) => callbackPool.end(resolve));
    }
  });
});

describe.skipIf(!available)(
  "MysqlEventStore on a one-connection pool, without its own init",
  () => {
    it("appends (the server's limits are not asked for on a second connection inside a write)", async () => {
      const database = await freshDatabase();
      // The tables are made by another process's store; this one is used as it is.
      const migrator = new MysqlEventStore({ pool: appPool({ database }) });
      await migrator.init();
      const store = new MysqlEventStore({ pool: appPool({ database, connectionLimit: 1 }) });
      const appended = await Promise.race([
        store.append({
          sessionId: "one-connection",
          runId: "r",
          expectedSeq: 0,
          events: [{ type: "run.started" }],
        }),
        new Promise((resolve) => setTimeout(() => resolve("waited on itself"), 5_000)),
      ]);
      expect(appended).toMatchObject({ deduplicated: false, events: [{ seq: 0 }] });
    });
  },
);
