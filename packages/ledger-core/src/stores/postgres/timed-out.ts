import type { PoolBounds } from "./bounded-pool.js";

/** node-postgres' words for a query that got no reply within its query_timeout. */
const QUERY_TIMEOUT = /^Query read timeout$/;

/** node-postgres' words for a connection not made (or not free) within connectionTimeoutMillis. */
const CONNECT_TIMEOUT =
  /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)$/;

/**
 * node-postgres' own words for a wait that passed its bound, told with the bound when the store
 * knows it (`bounds`); undefined for any other error.
 */
export function driverTimeout(error: Error, bounds: PoolBounds): string | undefined {
  if (QUERY_TIMEOUT.test(error.message))
    return bounds.query === undefined
      ? `no reply from the server in time (${error.message})`
      : `no reply from the server within ${bounds.query} ms (${error.message})`;
  if (CONNECT_TIMEOUT.test(error.message))
    return bounds.connect === undefined
      ? `no connection to the server in time (${error.message})`
      : `no connection to the server within ${bounds.connect} ms (${error.message})`;
  return undefined;
}

/** node-postgres' words for a connection not made (or not free) within its bound. */
export function driverConnectTimeout(error: Error): boolean {
  return CONNECT_TIMEOUT.test(error.message);
}
