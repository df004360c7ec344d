import pg from "pg";
import type { KnownKeys } from "../../events/argument-checks.js";
import { InvalidArgumentError } from "../../events/errors.js";
import { hasLoneSurrogate } from "../../events/json.js";
import type { EventStore } from "../../store/event-store.js";
import {
  assertHostPart,
  takeUrlParam,
  UNPARSABLE_URL,
  unusableUrl,
  withUrlParam,
} from "../../store/open-store.js";
import { redactUrl } from "../../store/redact-url.js";
import { storeTimeoutMs, TIMEOUT_PARAM, takeTimeoutParam } from "../server-timeout.js";
import { SqlEventStore } from "../sql/sql-event-store.js";
import { assertStoreOptions } from "../store-options.js";
import { boundedPool, ownedPoolConfig } from "./bounded-pool.js";
import { PostgresBackend } from "./postgres-backend.js";
import { assertKnownPostgresUrlParams } from "./url-params.js";

/**
 * A pool the application made (its size and timeouts stay the application's choice), or a
 * connection string for a pool the store makes and closes. `schema` keeps the ledger's tables
 * in their own PostgreSQL schema (created by `init()`; default `public`); a connection string
 * can name it as `?schema=` (so `openStore` URLs and the CLI reach such a ledger), which the
 * option overrides.
 *
 * `timeoutMs` bounds each wait of the store on the server: for a connection (a new one, or a
 * free one of the pool) and for the reply to each statement. Past it the call fails with
 * `store-unavailable` and the connection is destroyed: past the wait for a reply an append's
 * outcome is then unknown, as after a dropped connection; past the wait for a connection (as
 * when it is refused) nothing was sent, and the error says so (`nothingWritten`). A connection string can set it as `?timeoutMs=`; for the pool
 * the store makes the default is 30000 (0: no bound of the store's), and node-postgres'
 * `query_timeout` and libpq's `connect_timeout` (seconds) in the string keep their meaning.
 * On a pool the application made, the store bounds its own waits only when given `timeoutMs`
 * (the pool's `query_timeout` and `connectionTimeoutMillis` are the application's choice).
 * `init()` waits up to 10 minutes more than the bound for another process's migration.
 */
export type PostgresEventStoreOptions = ({ pool: pg.Pool } | { connectionString: string }) & {
  schema?: string;
  timeoutMs?: number;
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
  assertHostPart("$.connectionString", connectionString, ["postgres:", "postgresql:"]);
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

/**
 * Refuses a schema name PostgreSQL would not keep as given. Every statement quotes it, so
 * `agent-ledger`, `Ledger` or `v1.2` are taken as the application wrote them. PostgreSQL cuts
 * a name longer than 63 bytes without a word (two long names would share one schema), keeps
 * `pg_` names for itself, and a lone surrogate would reach it as U+FFFD.
 */
function assertSchema(path: string, schema: string | undefined): void {
  if (schema === undefined) return;
  if (
    schema.length === 0 ||
    Buffer.byteLength(schema) > 63 ||
    schema.includes("\u0000") ||
    hasLoneSurrogate(schema)
  )
    throw new InvalidArgumentError(
      path,
      "a schema name is 1-63 bytes of UTF-8 text without NUL (PostgreSQL cuts longer names)",
    );
  if (schema.startsWith("pg_"))
    throw new InvalidArgumentError(path, "schema names starting with pg_ are PostgreSQL's own");
}

/**
 * `?schema=` and `?timeoutMs=` taken out of a connection string (they are the store's, not
 * node-postgres'). The string comes back as written when it has neither.
 */
function takeStoreParams(url: string): {
  connectionString: string;
  schemaFromUrl?: string;
  timeoutFromUrl?: number;
} {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // A libpq keyword string ("host=... dbname=..."), which node-postgres also takes.
    return { connectionString: url };
  }
  assertKnownPostgresUrlParams(parsed);
  const schema = takeUrlParam(parsed, "schema");
  const timeout = takeTimeoutParam(parsed, "$.connectionString");
  if (schema === undefined && timeout === undefined) return { connectionString: url };
  assertSchema("$.connectionString", schema);
  return {
    connectionString: parsed.toString(),
    ...(schema === undefined ? {} : { schemaFromUrl: schema }),
    ...(timeout === undefined ? {} : { timeoutFromUrl: timeout }),
  };
}

const POSTGRES_OPTIONS: KnownKeys<PostgresEventStoreOptions> = {
  pool: true,
  connectionString: true,
  schema: true,
  timeoutMs: true,
};

/** The ledger in PostgreSQL (node-postgres). JSON is kept as TEXT so events read back verbatim. */
export class PostgresEventStore extends SqlEventStore {
  constructor(options: PostgresEventStoreOptions) {
    assertStoreOptions(options, {
      store: "PostgresEventStore",
      known: POSTGRES_OPTIONS,
      connection: ["pool", "connectionString"],
      example: '{ connectionString: "postgres://user@host:5432/db" }',
    });
    assertSchema("$.schema", options.schema);
    if ("pool" in options) {
      assertPool(options.pool);
      const timeoutMs =
        storeTimeoutMs({ option: options.timeoutMs, fromUrl: undefined, owned: false }) ?? 0;
      super(
        new PostgresBackend({
          pool: timeoutMs === 0 ? options.pool : boundedPool(options.pool, timeoutMs),
          owned: false,
          location: "postgres (application pool)",
          timeoutMs,
          // The pool's own connectionTimeoutMillis may end a wait first: its bound is unknown.
          bounds: timeoutMs === 0 ? {} : { query: timeoutMs },
          ...(options.schema === undefined ? {} : { schema: options.schema }),
        }),
        "postgres",
      );
    } else {
      checkConnectionString(options.connectionString);
      const { connectionString, schemaFromUrl, timeoutFromUrl } = takeStoreParams(
        options.connectionString,
      );
      const schema = options.schema ?? schemaFromUrl;
      const timeoutMs =
        storeTimeoutMs({ option: options.timeoutMs, fromUrl: timeoutFromUrl, owned: true }) ?? 0;
      const { config, bounds } = ownedPoolConfig(connectionString, timeoutMs);
      const pool = new pg.Pool(config);
      // An idle client whose connection drops emits 'error' on the pool; without a listener
      // that would end the process. The next checkout simply gets a new connection.
      pool.on("error", () => {});
      let location = redactUrl(connectionString);
      if (schema !== undefined) location = withUrlParam(location, "schema", schema);
      if (timeoutFromUrl !== undefined)
        location = withUrlParam(location, TIMEOUT_PARAM, String(timeoutFromUrl));
      super(
        new PostgresBackend({
          pool,
          owned: true,
          location,
          timeoutMs,
          bounds,
          ...(schema === undefined ? {} : { schema }),
          // The URL's ?schema= (or the URL alone, for "public") unless the option set it.
          schemaPath: options.schema === undefined ? "$.connectionString" : "$.schema",
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
