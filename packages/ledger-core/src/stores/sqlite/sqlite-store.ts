import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { KnownKeys } from "../../events/argument-checks.js";
import { assertObjectArgument } from "../../events/argument-checks.js";
import { InvalidArgumentError } from "../../events/errors.js";
import type { EventStore } from "../../store/event-store.js";
import { stopSignal } from "../../store/stop-signal.js";
import { SqlEventStore } from "../sql/sql-event-store.js";
import { assertStoreOptions } from "../store-options.js";
import type { FileCheckStopped, FileProblemsOptions } from "./file-check.js";
import { SqliteBackend } from "./sqlite-backend.js";
import type { Opener } from "./sqlite-connection.js";
import { sqlitePath } from "./sqlite-url.js";

/** Where the SQLite store keeps its data: a file path, or a database the application opened. */
export type SqliteEventStoreOptions = { path: string } | { database: Database.Database };

const SQLITE_OPTIONS: KnownKeys<SqliteEventStoreOptions> = { path: true, database: true };

function createBackend(options: SqliteEventStoreOptions): SqliteBackend {
  assertStoreOptions(options, {
    store: "SqliteEventStore",
    known: SQLITE_OPTIONS,
    connection: ["database", "path"],
    example: '{ path: "./ledger.db" }',
  });
  if ("database" in options) {
    const database = options.database;
    return new SqliteBackend({ open: () => database, location: database.name, owned: false });
  }
  const path: unknown = options.path;
  if (typeof path !== "string" || path.length === 0)
    throw new InvalidArgumentError(
      "$.path",
      "must be the path of the ledger's file, e.g. ./ledger.db",
    );
  // Else a reader is told "there is no such file", a writer "unable to open database file".
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory())
    throw new InvalidArgumentError(
      "$.path",
      `${path} is a directory: name the ledger's file, e.g. ${join(path, "ledger.db")}`,
    );
  const open: Opener = ({ mustExist }) => {
    if (mustExist && !existsSync(path)) return undefined;
    try {
      return new Database(path, { fileMustExist: mustExist });
    } catch (error) {
      // Gone between the check and the open: still no such file.
      if (mustExist && (error as { code?: string }).code === "SQLITE_CANTOPEN") return undefined;
      throw error;
    }
  };
  return new SqliteBackend({ open, location: path, owned: true });
}

/**
 * The ledger in one SQLite file: WAL, `synchronous=FULL` (an acknowledged append survives power
 * loss), `BEGIN IMMEDIATE` appends and a 10 s busy timeout so several processes can share it.
 */
export class SqliteEventStore extends SqlEventStore {
  readonly #backend: SqliteBackend;

  constructor(options: SqliteEventStoreOptions) {
    const backend = createBackend(options);
    super(backend, "sqlite");
    this.#backend = backend;
  }

  /**
   * What SQLite's own check (`PRAGMA quick_check`: every page, row and index entry of the file,
   * in time linear in its size) finds wrong with the file; empty when it is sound. The hash
   * chain proves events unchanged, not the indexes the store reads a run's head through: a
   * lost write of an index page reads as an intact, shorter run, and a resume would make its
   * last calls again. `agent-ledger verify` runs it.
   *
   * The check runs in a process of its own, on a read-only connection to the file (a database
   * in memory: on the store's connection), and this process goes on meanwhile. An aborted
   * `options.signal` kills that process: the answer is then `{ stopped: true }`, never a list.
   * A check that cannot be started, or a file it cannot open, is `store-unavailable`.
   */
  fileProblems(): Promise<string[]>;
  fileProblems(options: FileProblemsOptions): Promise<string[] | FileCheckStopped>;
  fileProblems(options: FileProblemsOptions = {}): Promise<string[] | FileCheckStopped> {
    // After close() a closed file would read as one SQLite cannot walk: refused instead.
    return this.whileOpen("fileProblems", async () => {
      assertObjectArgument(options, "$.options", "fileProblems' options must be an object");
      return this.#backend.fileProblems(stopSignal(options.signal));
    });
  }

  /** A store for `sqlite:<path>`, `sqlite::memory:` or `file:<path>`; call `init()` before use. */
  static fromUrl(url: string): EventStore {
    return new SqliteEventStore({ path: sqlitePath(url) });
  }
}
