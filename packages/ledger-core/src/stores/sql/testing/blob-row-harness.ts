import { setTimeout as sleep } from "node:timers/promises";
import mysql from "mysql2/promise";
import pg from "pg";
import type { EventStore } from "../../../store/event-store.js";
import { MysqlEventStore } from "../../mysql/index.js";
import { SERVER_EPOCH_MS as MYSQL_EPOCH_MS } from "../../mysql/server-clock.js";
import { PostgresEventStore } from "../../postgres/index.js";
import { SERVER_EPOCH_MS as PG_EPOCH_MS } from "../../postgres/server-clock.js";
import {
  type DeadlockWatch,
  watchMysqlDeadlocks,
  watchPostgresDeadlocks,
} from "./deadlock-watch.js";
import type { RacerTarget } from "./racer-store.js";

/**
 * How a third connection holds a blob row: `lock` takes it FOR UPDATE, as a collection's first
 * statement does, and leaves it; `delete` deletes it, as a collection does next, and commits
 * that at release.
 */
export type Hold = "lock" | "delete";

/**
 * A server's side of a blob-row lock test (PostgreSQL or MariaDB): two stores on their own
 * pools, a blocker, the ledger's statements waiting for row locks, and a blob's stamp.
 */
export interface BlobRowHarness {
  writer: EventStore;
  collector: EventStore;
  deadlocks: DeadlockWatch;
  /** Begins a transaction that holds the row of blob `ref` (`how`) until `release`. */
  hold(ref: string, how?: Hold): Promise<{ release(): Promise<void> }>;
  /** How many of the ledger's statements wait for a row lock. */
  waiting(): Promise<number>;
  /**
   * The text of each of those statements: PostgreSQL's statement as sent (a function's call),
   * MariaDB's statement running inside a block (not the block's text).
   */
  waitingStatements(): Promise<string[]>;
  /** Now on the server's clock, in epoch ms, as the stores stamp blobs. */
  nowMs(): Promise<number>;
  /** Blob `ref`'s stamp (touched_at, epoch ms on the server's clock); undefined: gone. */
  stampMs(ref: string): Promise<number | undefined>;
  close(): Promise<void>;
}

export async function blobRowHarness(target: RacerTarget): Promise<BlobRowHarness> {
  return target.kind === "postgres" ? postgresHarness(target) : mysqlHarness(target);
}

/** A connection of either driver, as `holdRow` uses it. */
interface Blocker {
  query(sql: string, values?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
}

/** The statement that holds blob `$ref`'s row of `table` (`param` its placeholder), as `how`. */
function rowStatement(table: string, param: string, how: Hold): string {
  return how === "lock"
    ? `SELECT 1 FROM ${table} WHERE blob_ref = ${param} FOR UPDATE`
    : `DELETE FROM ${table} WHERE blob_ref = ${param}`;
}

/** Begins a transaction on `blocker` (`begin`) that holds `ref`'s row until `release`. */
async function holdRow(
  blocker: Blocker,
  begin: string[],
  statement: string,
  ref: string,
): Promise<{ release(): Promise<void> }> {
  for (const text of begin) await blocker.query(text);
  await blocker.query(statement, [ref]);
  return {
    async release() {
      await blocker.query("COMMIT");
      await blocker.end();
    },
  };
}

async function postgresHarness(target: RacerTarget): Promise<BlobRowHarness> {
  const schema = target.schema as string;
  const pools = [1, 2].map(() => new pg.Pool({ connectionString: target.location, max: 2 }));
  const [writerPool, collectorPool] = pools as [pg.Pool, pg.Pool];
  const deadlocks = watchPostgresDeadlocks(writerPool);
  const collectorDeadlocks = watchPostgresDeadlocks(collectorPool);
  const admin = new pg.Client({ connectionString: target.location });
  await admin.connect();
  const waitingStatements = async () => {
    const result = await admin.query<{ query: string }>(
      `SELECT query FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND position($1 in query) > 0`,
      [`"${schema}"`],
    );
    return result.rows.map((row) => row.query);
  };
  return {
    writer: new PostgresEventStore({ pool: writerPool, schema }),
    collector: new PostgresEventStore({ pool: collectorPool, schema }),
    deadlocks: { count: () => deadlocks.count() + collectorDeadlocks.count() },
    async hold(ref, how = "lock") {
      const blocker = new pg.Client({ connectionString: target.location });
      await blocker.connect();
      return holdRow(blocker, ["BEGIN"], rowStatement(`"${schema}".blobs`, "$1", how), ref);
    },
    waiting: async () => (await waitingStatements()).length,
    waitingStatements,
    async nowMs() {
      const result = await admin.query<{ now: string }>(`SELECT ${PG_EPOCH_MS} AS now`);
      return Number(result.rows[0]?.now);
    },
    async stampMs(ref) {
      const result = await admin.query<{ stamp: string }>(
        `SELECT touched_at AS stamp FROM "${schema}".blobs WHERE blob_ref = $1`,
        [ref],
      );
      const stamp = result.rows[0]?.stamp;
      return stamp === undefined ? undefined : Number(stamp);
    },
    async close() {
      await admin.end();
      await Promise.all(pools.map((pool) => pool.end()));
    },
  };
}

async function mysqlHarness(target: RacerTarget): Promise<BlobRowHarness> {
  const database = new URL(target.location).pathname.slice(1);
  const pools = [1, 2].map(() => mysql.createPool({ uri: target.location, connectionLimit: 2 }));
  const [writerPool, collectorPool] = pools as [mysql.Pool, mysql.Pool];
  const deadlocks = watchMysqlDeadlocks(writerPool);
  const collectorDeadlocks = watchMysqlDeadlocks(collectorPool);
  const admin = await mysql.createConnection({ uri: target.location });
  const waitingStatements = async () => {
    const [rows] = await admin.query(
      // A write of the ledger's blob rows still running: one waiting for a row lock. A block
      // the store keeps prepared (a put of a few blobs, an append block) runs as Execute.
      `SELECT INFO AS statement FROM information_schema.PROCESSLIST
      WHERE DB = ? AND COMMAND IN ('Query', 'Execute') AND (INFO LIKE 'insert into %' OR INFO LIKE 'delete from %'
        OR INFO LIKE 'select % for update')`,
      [database],
    );
    return (rows as { statement: string }[]).map((row) => row.statement);
  };
  return {
    writer: new MysqlEventStore({ pool: writerPool }),
    collector: new MysqlEventStore({ pool: collectorPool }),
    deadlocks: { count: () => deadlocks.count() + collectorDeadlocks.count() },
    async hold(ref, how = "lock") {
      const blocker = await mysql.createConnection({ uri: target.location });
      const begin = ["SET TRANSACTION ISOLATION LEVEL READ COMMITTED", "BEGIN"];
      return holdRow(blocker, begin, rowStatement("blobs", "?", how), ref);
    },
    waiting: async () => (await waitingStatements()).length,
    waitingStatements,
    async nowMs() {
      const [rows] = await admin.query(`SELECT ${MYSQL_EPOCH_MS} AS now`);
      return Number((rows as { now: number | string }[])[0]?.now);
    },
    async stampMs(ref) {
      const [rows] = await admin.query("SELECT touched_at AS stamp FROM blobs WHERE blob_ref = ?", [
        ref,
      ]);
      const stamp = (rows as { stamp: number | string }[])[0]?.stamp;
      return stamp === undefined ? undefined : Number(stamp);
    },
    async close() {
      await admin.end();
      await Promise.all(pools.map((pool) => pool.end()));
    },
  };
}

/** Polls `check` every 10 ms until it holds; fails after 10 s, naming `what`. */
export async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} not reached within 10 s`);
    await sleep(10);
  }
}
