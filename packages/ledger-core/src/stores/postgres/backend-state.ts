import type { NodePgDatabase } from "drizzle-orm/node-postgres";
import type pg from "pg";
import type { AppendQueries } from "./append-queries.js";
import type { PoolBounds } from "./bounded-pool.js";
import type { postgresTables } from "./schema.js";

export type Tables = ReturnType<typeof postgresTables>;

/**
 * What one backend knows beyond its public face: its pool, its schema and what it learnt of
 * the server and the pooler in front of it. `PostgresBackend` keeps it private and hands it to
 * the functions of each concept (append-at-head.ts, write-steps.ts, put-blobs.ts,
 * init-database.ts...), as `MysqlBackend` does with `MysqlBackendState`.
 */
export class PostgresBackendState {
  readonly pool: pg.Pool;
  readonly owned: boolean;
  readonly schema: string;
  /** The option that chose the schema (`$.schema`, or `$.connectionString` for `?schema=`). */
  readonly schemaPath: string;
  readonly location: string;
  readonly tables: Tables;
  /** The store's bound on each wait for the server (0: none of its own; see bounded-pool.ts). */
  readonly timeoutMs: number;
  /** The bounds the pool has, as far as the store knows them (for its error messages). */
  readonly bounds: PoolBounds;
  readonly bound = new WeakMap<pg.PoolClient, NodePgDatabase>();
  appendQueries: AppendQueries | undefined;
  /** False once a pooler in transaction mode refused a named statement (see autocommit). */
  named = true;
  /** synchronous_commit as init's connection had it (an application's pool may turn it off). */
  synchronousCommit = "unknown";

  constructor(options: {
    pool: pg.Pool;
    owned: boolean;
    schema: string;
    schemaPath: string;
    location: string;
    tables: Tables;
    timeoutMs: number;
    bounds: PoolBounds;
  }) {
    this.pool = options.pool;
    this.owned = options.owned;
    this.schema = options.schema;
    this.schemaPath = options.schemaPath;
    this.location = options.location;
    this.tables = options.tables;
    this.timeoutMs = options.timeoutMs;
    this.bounds = options.bounds;
  }
}
