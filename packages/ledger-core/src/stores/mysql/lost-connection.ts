import { BROKEN_SOCKET_CODES } from "../read-retry.js";
import { driverError } from "../sql/sql-backend.js";

/**
 * mysql2's codes for a connection lost under a statement: the server closed it
 * (PROTOCOL_CONNECTION_LOST: KILL CONNECTION of an idle connection, a shutdown, a failover,
 * wait_timeout), or the socket was reset or broken.
 */
const LOST_CODES: ReadonlySet<string> = new Set(["PROTOCOL_CONNECTION_LOST"]);

/**
 * Server errors that end the connection: ER_SERVER_SHUTDOWN (1053), ER_CONNECTION_KILLED
 * (1927, MariaDB's KILL CONNECTION of a connection running a statement), and MySQL's
 * ER_CLIENT_INTERACTION_TIMEOUT (4031: a connection left idle past wait_timeout, not a wait of
 * the statement's). Not KILL QUERY's ER_QUERY_INTERRUPTED (1317): the operator stopped that
 * statement, not the connection.
 */
const LOST_ERRNOS: ReadonlySet<number> = new Set([1053, 1927, 4031]);

/** mysql2's words, without a code, for a statement sent to a connection it knows is closed. */
const CLOSED = "Can't add new command when connection is in closed state";

/**
 * Whether `error` says the connection a statement went on was lost (see retryRead): anything
 * else (a refused statement, a timeout, a connection that could not be made) is not.
 */
export function lostConnection(error: unknown): boolean {
  const found = driverError(error);
  if (
    found.code !== undefined &&
    (LOST_CODES.has(found.code) || BROKEN_SOCKET_CODES.has(found.code))
  )
    return true;
  if (found.errno !== undefined) return LOST_ERRNOS.has(found.errno);
  return found.error instanceof Error && found.error.message === CLOSED;
}
