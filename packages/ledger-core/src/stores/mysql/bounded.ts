import type mysql from "mysql2/promise";
import { connectionWithin, overriding, withinBound } from "../server-timeout.js";
import { driverError } from "../sql/sql-backend.js";

/**
 * The store's bound on its waits for a MySQL server (mysql2 has no pool-wide query timeout, and
 * its per-query one leaves the connection busy with the statement it gave up on): a wait for a
 * connection of the pool is raced with it (one that comes later is given back), and so is each
 * statement; past the bound the connection is destroyed, so the pool never hands it out again.
 * 0: no bound of the store's.
 */

/** Connections already destroyed (a second destroy would end their socket again). */
const destroyed = new WeakSet<object>();

/**
 * Destroys a pooled connection: out of the pool, and, unless `graceful` (a connection that
 * works, whose session the store changed), its socket destroyed: mysql2's destroy only ends
 * it, with a FIN a silent server never answers, and the socket would hold the process until
 * the kernel gives up.
 */
export function destroyConnection(
  connection: mysql.PoolConnection,
  options: { graceful?: boolean } = {},
): void {
  if (destroyed.has(connection)) return;
  destroyed.add(connection);
  connection.destroy();
  if (options.graceful) return;
  (
    connection as unknown as { connection?: { stream?: { destroy?(): void } } }
  ).connection?.stream?.destroy?.();
}

/** A connection of the pool within `timeoutMs`. */
export function checkout(pool: mysql.Pool, timeoutMs: number): Promise<mysql.PoolConnection> {
  return connectionWithin(pool.getConnection(), timeoutMs, (connection) => connection.release());
}

/** `connection` whose statements (query, execute) each answer within `timeoutMs`. */
export function boundedConnection(
  connection: mysql.PoolConnection,
  timeoutMs: number,
): mysql.PoolConnection {
  if (timeoutMs === 0) return connection;
  const within =
    (method: "query" | "execute") =>
    (...args: unknown[]) =>
      withinBound({
        wait: Reflect.apply(connection[method], connection, args) as Promise<unknown>,
        timeoutMs,
        what: "reply",
        expire: () => destroyConnection(connection),
      });
  return overriding(connection, { query: within("query"), execute: within("execute") });
}

/**
 * `run` on a connection of the pool, bounded; the connection goes back to the pool, or is
 * destroyed when what failed was not a statement the server refused (a lost connection, a
 * timeout).
 */
export async function withConnection<T>(
  pool: mysql.Pool,
  timeoutMs: number,
  run: (connection: mysql.PoolConnection) => Promise<T>,
): Promise<T> {
  const connection = await checkout(pool, timeoutMs);
  try {
    const result = await run(boundedConnection(connection, timeoutMs));
    connection.release();
    return result;
  } catch (error) {
    if (driverError(error).errno === undefined) destroyConnection(connection);
    else connection.release();
    throw error;
  }
}

/**
 * The pool as drizzle's reads see it: each query on a connection of its own, bounded (see
 * withConnection).
 */
export function boundedReads(pool: mysql.Pool, timeoutMs: number): mysql.Pool {
  if (timeoutMs === 0) return pool;
  const on =
    (method: "query" | "execute") =>
    (...args: unknown[]) =>
      withConnection(
        pool,
        timeoutMs,
        (connection) => Reflect.apply(connection[method], connection, args) as Promise<unknown>,
      );
  return overriding(pool, { query: on("query"), execute: on("execute") });
}
