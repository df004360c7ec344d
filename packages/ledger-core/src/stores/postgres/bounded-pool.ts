import type pg from "pg";
import { connectionWithin, overriding } from "../server-timeout.js";

/** Bounds of a pool, in ms, as the store configured or enforces them (undefined: none known). */
export interface PoolBounds {
  /** The wait for a client of the pool (a new connection included). */
  connect?: number;
  /** The wait for the reply to each query. */
  query?: number;
}

/**
 * The options of the pool a store makes for a connection string, bounded by `timeoutMs` (none
 * when 0): node-postgres' own `connectionTimeoutMillis` (which also destroys a connection that
 * never completes) and `query_timeout`. The string's own parameters keep their meaning:
 * `query_timeout` (node-postgres reads it, and it wins over the option) and libpq's
 * `connect_timeout` in seconds, which node-postgres takes only for its native binding: here it
 * bounds connecting.
 */
export function ownedPoolConfig(
  connectionString: string,
  timeoutMs: number,
): { config: pg.PoolConfig; bounds: PoolBounds } {
  const params = searchParams(connectionString);
  const connectSeconds = Number(params?.get("connect_timeout") ?? Number.NaN);
  const fromUrl = Number(params?.get("query_timeout") ?? Number.NaN);
  const connect =
    Number.isFinite(connectSeconds) && connectSeconds > 0
      ? Math.round(connectSeconds * 1000)
      : timeoutMs;
  const config: pg.PoolConfig = { connectionString };
  const bounds: PoolBounds = {};
  if (connect > 0) config.connectionTimeoutMillis = bounds.connect = connect;
  if (timeoutMs > 0) config.query_timeout = timeoutMs;
  if (Number.isFinite(fromUrl) && fromUrl > 0) bounds.query = fromUrl;
  else if (timeoutMs > 0) bounds.query = timeoutMs;
  return { config, bounds };
}

function searchParams(connectionString: string): URLSearchParams | undefined {
  try {
    return new URL(connectionString).searchParams;
  } catch {
    return undefined; // a libpq keyword string: node-postgres reads its keywords itself
  }
}

/**
 * A query with node-postgres' per-query `query_timeout`, which wins over the pool's (the types
 * of pg do not name it).
 */
export function boundedQuery(config: pg.QueryConfig, timeoutMs: number): pg.QueryConfig {
  return { ...config, query_timeout: timeoutMs } as pg.QueryConfig;
}

/** A query's config with `query_timeout` added, unless it sets its own. */
function withQueryTimeout(config: unknown, timeoutMs: number): unknown {
  if (typeof config === "string") return { text: config, query_timeout: timeoutMs };
  if (typeof config !== "object" || config === null) return config;
  const given = config as { submit?: unknown; query_timeout?: number };
  if (typeof given.submit === "function") return config; // a Submittable (a cursor) as it is
  return { ...given, query_timeout: given.query_timeout ?? timeoutMs };
}

/**
 * A pool the application made, as the store uses it when given `timeoutMs` (its own settings
 * stay as they are for the application's queries): each query the store sends carries the
 * bound as node-postgres' `query_timeout` (a client that timed out is released with the error,
 * so the pool destroys it), and the wait for a client of the pool is raced with it (a client
 * that comes later is given back at once). A connection that never completes is the pool's
 * to end: its own `connectionTimeoutMillis`.
 */
export function boundedPool(pool: pg.Pool, timeoutMs: number): pg.Pool {
  const clients = new WeakMap<pg.PoolClient, pg.PoolClient>();
  const bounded = (client: pg.PoolClient): pg.PoolClient => {
    let wrapped = clients.get(client);
    if (wrapped === undefined) {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      wrapped = overriding(client, {
        query: (config: unknown, ...rest: unknown[]) =>
          query(withQueryTimeout(config, timeoutMs), ...rest),
      });
      clients.set(client, wrapped);
    }
    return wrapped;
  };
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  const connect = (): Promise<pg.PoolClient> => {
    return connectionWithin(pool.connect(), timeoutMs, (client) => client.release()).then(bounded);
  };
  return overriding(pool, {
    connect,
    query: (config: unknown, ...rest: unknown[]) =>
      query(withQueryTimeout(config, timeoutMs), ...rest),
  });
}
