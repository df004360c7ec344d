import mysql from "mysql2/promise";
import type { KnownKeys } from "../../events/argument-checks.js";
import { InvalidArgumentError } from "../../events/errors.js";
import type { EventStore } from "../../store/event-store.js";
import { assertHostPart, unusableUrl } from "../../store/open-store.js";
import { redactUrl } from "../../store/redact-url.js";
import { storeTimeoutMs } from "../server-timeout.js";
import { SqlEventStore } from "../sql/sql-event-store.js";
import { assertStoreOptions } from "../store-options.js";
import { MysqlBackend } from "./mysql-backend.js";
import { ownedPoolSettings } from "./pool-config.js";
import { STRICT_SESSION } from "./session-settings.js";

/**
 * A pool the application made (its size and timeouts stay the application's choice), or a URI
 * for a pool the store makes and closes. `database` keeps the ledger's tables in another
 * database than the pool's default one (it must exist).
 *
 * `timeoutMs` bounds each wait of the store on the server: for a connection of the pool and
 * for the reply to each statement (mysql2 has no pool-wide query timeout: the store races each
 * of its statements). Past it the call fails with `store-unavailable` and the connection is
 * destroyed: past the wait for a reply an append's outcome is then unknown, as after a dropped
 * connection; past the wait for a connection (as when it is refused) nothing was sent, and the
 * error says so (`nothingWritten`). A URI can set it as `?timeoutMs=`; for the pool the store
 * makes the default is 30000, which is also its `connectTimeout` unless the URI sets mysql2's
 * own; 0: no bound of the store's. On a pool the application made, the store bounds its
 * statements only when given `timeoutMs`. `init()` waits up to 10 minutes more than the bound
 * for another process's migration.
 */
export type MysqlEventStoreOptions = ({ pool: mysql.Pool } | { uri: string }) & {
  database?: string;
  timeoutMs?: number;
};

/**
 * Refuses what is not a mysql2/promise pool: a callback pool (from "mysql2", whose
 * `getConnection` answers through a callback) or a single connection (which the application's
 * queries would share with the store's transactions).
 */
function assertPromisePool(pool: unknown): void {
  const candidate = pool as { getConnection?: unknown; promise?: unknown } | undefined;
  if (typeof candidate?.promise === "function")
    throw new InvalidArgumentError(
      "$.pool",
      'expected a mysql2/promise pool; this is a callback pool from "mysql2": pass pool.promise()',
    );
  if (typeof candidate?.getConnection !== "function")
    throw new InvalidArgumentError(
      "$.pool",
      "expected a mysql2/promise pool (createPool), not a single connection",
    );
}

/**
 * Makes each connection of the store's own pool strict (see STRICT_SESSION) before the store's
 * first statement on it (a connection runs its statements in order); one that cannot be is
 * closed, so the store's statement on it fails rather than run lenient. A reset on release
 * (`?resetOnRelease=true`) would put the server's sql_mode back: refused.
 */
function strictSessions(pool: mysql.Pool, uri: string): void {
  if ((pool.pool as unknown as { config?: { resetOnRelease?: boolean } }).config?.resetOnRelease) {
    void pool.end();
    throw new InvalidArgumentError(
      "$.uri",
      `resetOnRelease would undo the store's session settings (a strict sql_mode) on each release: remove it from ${redactUrl(uri)}`,
    );
  }
  pool.pool.on("connection", (connection) => {
    connection.query(STRICT_SESSION, (error) => {
      if (error) connection.destroy();
    });
  });
}

/**
 * A name MySQL and MariaDB accept for a database. Every statement quotes it, so `my-app`,
 * `agent ledger` or `v1.2` work as the application named them. The server would refuse the
 * rest itself (NUL, characters above U+FFFF, a trailing space, more than 64 characters), with
 * a message that names no option.
 */
function isDatabaseName(name: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is what it refuses
  return /^[^\u0000\ud800-\udfff]{1,64}$/.test(name) && !name.endsWith(" ");
}

const MYSQL_OPTIONS: KnownKeys<MysqlEventStoreOptions> = {
  pool: true,
  uri: true,
  database: true,
  timeoutMs: true,
};

/** The ledger in MySQL or MariaDB (mysql2). */
export class MysqlEventStore extends SqlEventStore {
  constructor(options: MysqlEventStoreOptions) {
    assertStoreOptions(options, {
      store: "MysqlEventStore",
      known: MYSQL_OPTIONS,
      connection: ["pool", "uri"],
      example: '{ uri: "mysql://user@host:3306/db" }',
    });
    if (options.database !== undefined && !isDatabaseName(options.database))
      throw new InvalidArgumentError(
        "$.database",
        "a database name is 1-64 characters, without NUL, characters above U+FFFF or a trailing space",
      );
    const database = options.database === undefined ? {} : { database: options.database };
    if ("pool" in options) {
      assertPromisePool(options.pool);
      super(
        new MysqlBackend({
          pool: options.pool,
          owned: false,
          location: "mysql (application pool)",
          timeoutMs:
            storeTimeoutMs({ option: options.timeoutMs, fromUrl: undefined, owned: false }) ?? 0,
          ...database,
        }),
        "mysql",
      );
    } else {
      if (typeof options.uri !== "string" || options.uri.length === 0)
        throw new InvalidArgumentError("$.uri", "expected a mysql:// or mariadb:// URL");
      assertHostPart("$.uri", options.uri, ["mysql:", "mariadb:"]);
      const { uri, timeoutMs, connectTimeoutMs, connectTimeout } = ownedPoolSettings(
        options.uri,
        options.timeoutMs,
      );
      let pool: mysql.Pool;
      try {
        pool = mysql.createPool({
          uri,
          charset: "utf8mb4",
          supportBigNumbers: true,
          ...connectTimeout,
        });
      } catch (error) {
        // An option the URL sets wrongly (e.g. ?ssl=true): the driver throws while making the pool.
        throw unusableUrl(
          "$.uri",
          options.uri,
          error instanceof Error ? error.message : String(error),
        );
      }
      strictSessions(pool, options.uri);
      super(
        new MysqlBackend({
          pool,
          owned: true,
          location: redactUrl(options.uri),
          timeoutMs,
          ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
          ...database,
        }),
        "mysql",
      );
    }
  }

  /** A store with its own pool for a `mysql://` (or `mariadb://`) URL; call `init()` first. */
  static fromUrl(url: string): EventStore {
    return new MysqlEventStore({ uri: url });
  }
}
