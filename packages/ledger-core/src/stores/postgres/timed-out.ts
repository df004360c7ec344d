import { ServerTimeoutError } from "../server-timeout.js";
import type { PoolBounds } from "./bounded-pool.js";

/** node-postgres' words for a query that got no reply within its query_timeout. */
const QUERY_TIMEOUT = /^Query read timeout$/;

/** node-postgres' words for a connection not made (or not free) within connectionTimeoutMillis. */
const CONNECT_TIMEOUT =
  /^(timeout exceeded when trying to connect|Connection terminated due to connection timeout)$/;

/**
 * What the store says of a wait that passed a bound, and the error it passed with (the store
 * error's `cause`), or undefined when `error` is no timeout. node-postgres' own errors say
 * nothing of the bound: it is named when the store knows it.
 */
export function timedOut(
  error: unknown,
  bounds: PoolBounds,
): { message: string; error: unknown } | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof ServerTimeoutError) return { message: current.message, error: current };
    if (QUERY_TIMEOUT.test(current.message))
      return {
        message:
          bounds.query === undefined
            ? `no reply from the server in time (${current.message})`
            : `no reply from the server within ${bounds.query} ms (${current.message})`,
        error: current,
      };
    if (CONNECT_TIMEOUT.test(current.message))
      return {
        message:
          bounds.connect === undefined
            ? `no connection to the server in time (${current.message})`
            : `no connection to the server within ${bounds.connect} ms (${current.message})`,
        error: current,
      };
    current = current.cause;
  }
  return undefined;
}
