import pg from "pg";
import { InvalidArgumentError } from "../../events/errors.js";
import type { EventStore } from "../../store/event-store.js";
import { redactUrl, UNPARSABLE_URL, unusableUrl } from "../../store/open-store.js";
import { SqlEventStore } from "../sql/sql-event-store.js";
import { PostgresBackend } from "./postgres-backend.js";

/**
 * A pool the application made (its size and timeouts stay the application's choice), or a
 * connection string for a pool the store makes and closes. `schema` keeps the ledger's tables
 * in their own PostgreSQL schema (created by `init()`; default `public`).
 */
export type PostgresEventStoreOptions = ({ pool: pg.Pool } | { connectionString: string }) & {
  schema?: string;
};

/**
 * Refuses a connection string node-postgres cannot parse, here rather than at the first
 * connection (where its error would come as store-unavailable, carrying the URL and password).
 * A client parses the string when made, and connects only when asked to.
 */
function checkConnectionString(connectionString: string): void {
  // Unset (an environment variable that is not there): pg would connect to its defaults.
  if (typeof connectionString !== "string" || connectionString.length === 0)
    throw new InvalidArgumentError("$.connectionString", "expected a postgres:// URL");
  try {
    new pg.Client({ connectionString });
  } catch (error) {
    throw unusableUrl(
      "$.connectionString",
      connectionString,
      error instanceof TypeError && /Invalid URL/i.test(error.message)
        ? UNPARSABLE_URL
        : error instanceof Error
          ? error.message
          : String(error),
    );
  }
}

/**
 * Refuses what is not a pg.Pool. A pg.Client has `connect()` and `query()` too, but one
 * connection cannot be shared: the application's queries would run inside the store's
 * transactions (and be rolled back with them). A pool of `max: 1` gives the same one
 * connection, checked out in turn.
 */
function assertPool(pool: unknown): void {
  const candidate = pool as Partial<pg.Pool> | undefined;
  if (
    typeof candidate?.connect !== "function" ||
    typeof candidate.query !== "function" ||
    typeof candidate.totalCount !== "number"
  )
    throw new InvalidArgumentError(
      "$.pool",
      "expected a pg.Pool (a pg.Client cannot be shared with the store: pass new pg.Pool({ ..., max: 1 }) for one connection)",
    );
}

/** The ledger in PostgreSQL (node-postgres). JSON is kept as TEXT so events read back verbatim. */
export class PostgresEventStore extends SqlEventStore {
  constructor(options: PostgresEventStoreOptions) {
    if (options.schema !== undefined && !/^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(options.schema))
      throw new InvalidArgumentError("$.schema", "a schema name is a plain SQL identifier");
    if ("pool" in options) {
      assertPool(options.pool);
      super(
        new PostgresBackend({
          pool: options.pool,
          owned: false,
          location: "postgres (application pool)",
          ...(options.schema === undefined ? {} : { schema: options.schema }),
        }),
        "postgres",
      );
    } else {
      checkConnectionString(options.connectionString);
      const pool = new pg.Pool({ connectionString: options.connectionString });
      // An idle client whose connection drops emits 'error' on the pool; without a listener
      // that would end the process. The next checkout simply gets a new connection.
      pool.on("error", () => {});
      super(
        new PostgresBackend({
          pool,
          owned: true,
          location: redactUrl(options.connectionString),
          ...(options.schema === undefined ? {} : { schema: options.schema }),
        }),
        "postgres",
      );
    }
  }

  /** A store with its own pool for a `postgres://` URL; call `init()` before use. */
  static fromUrl(url: string): EventStore {
    return new PostgresEventStore({ connectionString: url });
  }
}
