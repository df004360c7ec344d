import { existsSync } from "node:fs";
import { dirname } from "node:path";
import type Database from "better-sqlite3";
import { type BetterSQLite3Database, drizzle } from "drizzle-orm/better-sqlite3";
import { InvalidArgumentError, noLedgerError, StoreUnavailableError } from "../../events/errors.js";
import { type ConnectionHeads, connectionHeads } from "./sqlite-heads.js";

/**
 * Opens the store's database; with `mustExist`, undefined where there is no such file (nothing
 * is made).
 */
export type Opener = (options: { mustExist: boolean }) => Database.Database | undefined;

export interface SqliteConnectionOptions {
  open: Opener;
  location: string;
  /** The store opened the database, so it closes it (not so for the application's own). */
  owned: boolean;
}

/** An open connection and what hangs on it. */
interface Connection {
  database: Database.Database;
  db: BetterSQLite3Database;
  heads: ConnectionHeads;
}

/**
 * The SQLite store's one connection, opened on first use (the store's `init`), so that
 * `init({ create: false })` can refuse a missing file without making it, or a file that holds
 * no ledger without changing it. A path that cannot hold a ledger (no such folder, a file that
 * is not a SQLite database) is `invalid-argument` at `$.path`; any other failure to open (no
 * permission, a lock) is `store-unavailable`. Closed once, after which it refuses instead of
 * opening again.
 */
export class SqliteConnection {
  readonly #open: Opener;
  readonly #location: string;
  readonly #owned: boolean;
  #connection: Connection | undefined;
  #closed = false;

  constructor(options: SqliteConnectionOptions) {
    this.#open = options.open;
    this.#location = options.location;
    this.#owned = options.owned;
  }

  /** The connection, opened (and the file made, if missing) on first use. */
  get current(): Connection {
    return this.#connection ?? (this.#opened({ mustExist: false }) as Connection);
  }

  /**
   * Opens the database and sets what belongs to the connection alone (busy timeout, fsync on
   * commit, deleted content zeroed); undefined with `mustExist` where there is no such file.
   * A failure is `invalid-argument` for a path that cannot hold a ledger (setUpMistake), else
   * `store-unavailable` (no permission), and a handle of its own is closed again. WAL is set
   * by the store's `init`: it is written into the file, which a reader that opens a file
   * holding no ledger must leave as it was.
   */
  #opened(options: { mustExist: boolean }): Connection | undefined {
    if (this.#closed)
      throw new StoreUnavailableError(`the SQLite store on ${this.#location} is closed`);
    let database: Database.Database | undefined;
    try {
      database = this.#open(options);
      if (database === undefined) return undefined;
      database.pragma("busy_timeout = 10000");
      database.pragma("synchronous = FULL");
      // A deleted session's pages are zeroed, not left in the file's free pages (it is
      // deleted for good: a ledger holds prompts, tool results, personal data).
      database.pragma("secure_delete = ON");
    } catch (error) {
      if (this.#owned && database?.open) database.close();
      throw (
        (this.#owned ? setUpMistake(this.#location, error) : undefined) ??
        new StoreUnavailableError(openFailure(this.#location, error), error)
      );
    }
    this.#connection = {
      database,
      db: drizzle({ client: database }),
      heads: connectionHeads(database),
    };
    return this.#connection;
  }

  /**
   * For `init({ create: false })`: not-found unless the location holds a ledger (its schema
   * version, read by `schemaVersion`, is above 0), having made nothing and changed nothing
   * there: the file is opened only if it exists, and only read.
   */
  assertLedger(schemaVersion: () => number): void {
    const none = (why: string) => noLedgerError(this.#location, why);
    try {
      if (this.#connection === undefined && this.#opened({ mustExist: true }) === undefined)
        throw none("there is no such file");
      if (schemaVersion() === 0) throw none("the file has no agent-ledger tables");
    } catch (error) {
      // Raw from a read, or as the cause of the store-unavailable that opening made of it.
      const causes = [error, (error as { cause?: unknown }).cause];
      if (causes.some((cause) => (cause as { code?: unknown })?.code === "SQLITE_NOTADB"))
        throw none("the file is not a SQLite database");
      throw error;
    }
  }

  close(): void {
    this.#closed = true;
    const database = this.#connection?.database;
    if (this.#owned && database?.open) database.close();
  }
}

/**
 * The `invalid-argument` for a failure to open that no retry mends, as `store-unavailable`
 * (which supervisors retry) would have it: the path's folder does not exist, or the file is
 * not a SQLite database. A missing permission stays `store-unavailable`: an operator mends it
 * (chmod, chown, a mount) while the agent is retried, with nothing to change in its set-up.
 */
function setUpMistake(location: string, error: unknown): InvalidArgumentError | undefined {
  const folder = dirname(location);
  if (!existsSync(folder))
    return new InvalidArgumentError(
      "$.path",
      `the folder ${folder} of the SQLite database ${location} does not exist, and SQLite makes no folder: create it (mkdir -p ${folder}), or name a file in a folder that exists. Nothing was made`,
      { cause: error },
    );
  if ((error as { code?: unknown }).code === "SQLITE_NOTADB")
    return new InvalidArgumentError(
      "$.path",
      `${location} is not a SQLite database file (its first bytes are not SQLite's header): name the ledger's file, or a path where none is yet for a new ledger. If it held a ledger, its first page is damaged: restore it from a backup (sqlite3 ${location} ".recover" saves what is readable). The file was left as it was`,
      { cause: error },
    );
  return undefined;
}

/**
 * Why a database could not be opened, in words that say what to do. A WAL database that no
 * process has open has no `-shm` and `-wal` files, and SQLite must create them to read it: a
 * person who may read the ledger but not write to its folder (an on-call engineer reading the
 * agent's file) gets SQLITE_READONLY_DIRECTORY, which the driver words as "attempt to write a
 * readonly database". While the agent runs, or after it was killed, the files are there, and
 * such a reader reads.
 */
export function openFailure(location: string, error: unknown): string {
  if ((error as { code?: unknown }).code === "SQLITE_READONLY_DIRECTORY") {
    const folder = dirname(location);
    return (
      `cannot read the SQLite database ${location} as this user: SQLite reads a WAL database ` +
      `through ${location}-shm and ${location}-wal beside it, which are missing (no process has ` +
      `the ledger open), and this user may not create files in ${folder}. Run as a user who may ` +
      `write to ${folder} (the agent's own), or copy ${location} into a folder you can write to ` +
      "and read the copy"
    );
  }
  return `cannot open the SQLite database ${location}: ${String(error)}`;
}
