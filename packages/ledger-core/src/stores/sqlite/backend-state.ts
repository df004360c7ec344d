import type Database from "better-sqlite3";
import type { BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import type { HeadAppend } from "../sql/head-cache.js";
import type { WriteProgram } from "../sql/write-program.js";
import type { ReadStatements } from "./read-statements.js";
import type { SqliteConnection } from "./sqlite-connection.js";
import type { ConnectionHeads } from "./sqlite-heads.js";
import type { Statement, Statements } from "./write-statements.js";

/**
 * What one backend knows beyond its public face: its connection and the statements and
 * transactions it prepared on it. `SqliteBackend` keeps it private and hands it to the
 * functions of each concept (append-at-head.ts, write-steps.ts, put-blobs.ts,
 * init-database.ts...), as `MysqlBackend` does with `MysqlBackendState`.
 */
export class SqliteBackendState {
  readonly connection: SqliteConnection;
  readonly location: string;
  statements: Statements | undefined;
  readStatements: ReadStatements | undefined;
  putBlob: Statement | undefined;
  getBlobs: Statement | undefined;
  transaction: ((program: () => WriteProgram<unknown>) => unknown) | undefined;
  atHead: ((append: HeadAppend) => number | undefined) | undefined;

  constructor(options: { connection: SqliteConnection; location: string }) {
    this.connection = options.connection;
    this.location = options.location;
  }

  get database(): Database.Database {
    return this.connection.current.database;
  }

  get db(): BetterSQLite3Database {
    return this.connection.current.db;
  }

  get heads(): ConnectionHeads {
    return this.connection.current.heads;
  }

  /** Closing: what was prepared on the connection is dropped with it. */
  forgetPrepared(): void {
    this.statements = undefined;
    this.readStatements = undefined;
    this.transaction = undefined;
    this.atHead = undefined;
    this.putBlob = undefined;
    this.getBlobs = undefined;
  }
}
