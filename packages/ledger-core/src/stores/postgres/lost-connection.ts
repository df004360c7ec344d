import { BROKEN_SOCKET_CODES } from "../read-retry.js";
import { driverError } from "../sql/sql-backend.js";

/**
 * SQLSTATEs of a connection the server ended: admin_shutdown (pg_terminate_backend, a fast
 * shutdown or a failover), crash_shutdown (another backend crashed), idle_session_timeout (a
 * connection left idle past the server's setting, not a wait of the statement's), and
 * connection_exception's codes for a connection that is gone.
 */
const ENDED_BY_SERVER: ReadonlySet<string> = new Set([
  "57P01",
  "57P02",
  "57P05",
  "08000",
  "08003",
  "08006",
]);

/**
 * node-postgres' words, without a code, for a connection that closed without the server's
 * word (a proxy or the network ended it) or a client that already lost its own. Not
 * "Connection terminated due to connection timeout", a bound (timed-out.ts), nor a client
 * ended on purpose ("Connection terminated").
 */
const LOST =
  /^(Connection terminated unexpectedly|Client has encountered a connection error and is not queryable)$/;

/**
 * Whether `error` says the connection a statement went on was lost (see retryRead): anything
 * else (a refused statement, a timeout, a connection that could not be made) is not.
 */
export function lostConnection(error: unknown): boolean {
  const found = driverError(error);
  if (found.code !== undefined)
    return ENDED_BY_SERVER.has(found.code) || BROKEN_SOCKET_CODES.has(found.code);
  return found.error instanceof Error && LOST.test(found.error.message);
}
