import type { MySql2Database } from "drizzle-orm/mysql2";
import type mysql from "mysql2/promise";
import type { mysqlTables } from "./schema.js";
import type { StorageSettings } from "./storage-settings.js";
import { quoteIdent } from "./storage-settings.js";

export type Tables = ReturnType<typeof mysqlTables>;
export type Db = MySql2Database;

/**
 * What one backend knows beyond its public face: its pool, its database and what it learnt of
 * the server. `MysqlBackend` keeps it private and hands it to the functions of each concept
 * (append-block.ts, write-steps.ts, put-blobs.ts, init-database.ts...), as `SessionRecorder`
 * does with `RecorderState`: private `#fields` cannot be shared across files.
 */
export class MysqlBackendState {
  readonly pool: mysql.Pool;
  readonly owned: boolean;
  readonly database: string | undefined;
  readonly location: string;
  readonly tables: Tables;
  /** The store's bound on each wait for the server (0: none of its own; see bounded.ts). */
  readonly timeoutMs: number;
  /** mysql2's connectTimeout of a pool the store made, for its error messages. */
  readonly connectTimeoutMs: number | undefined;
  /** The ledger's tables named with the configured database (see configuredDatabase), if any. */
  readonly tablePrefix: string;
  readonly bound = new WeakMap<mysql.PoolConnection, Db>();
  /**
   * Whether appends can run as one compound block, once asked: the server is MariaDB (which has
   * anonymous blocks) and the pool's connections take the result set the block answers with.
   */
  blocks: boolean | undefined;
  /** The server's max_allowed_packet in bytes: no statement may be longer. */
  maxPacket: number | undefined;
  /** What init found: the ledger's tables are InnoDB (checked), and how InnoDB commits. */
  storage: StorageSettings | undefined;

  constructor(options: {
    pool: mysql.Pool;
    owned: boolean;
    database: string | undefined;
    location: string;
    tables: Tables;
    timeoutMs: number;
    connectTimeoutMs: number | undefined;
  }) {
    this.pool = options.pool;
    this.owned = options.owned;
    this.database = options.database;
    this.location = options.location;
    this.tables = options.tables;
    this.timeoutMs = options.timeoutMs;
    this.connectTimeoutMs = options.connectTimeoutMs;
    this.tablePrefix = options.database === undefined ? "" : `${quoteIdent(options.database)}.`;
  }
}
