import type { Pool as MysqlPool } from "mysql2/promise";
import type pg from "pg";

/**
 * The deadlocks the server reported to a pool's connections (PostgreSQL 40P01, MySQL/MariaDB
 * 1213), as the driver saw them. A store runs a rolled-back transaction again, so its caller
 * never hears of one: this is how a test sees them happen. Only connections the pool opens
 * after the call are watched.
 */
export interface DeadlockWatch {
  count(): number;
}

type Method = (...args: unknown[]) => unknown;

/** Wraps `methods` of a driver connection so that each failure is given to `seen`. */
function tapErrors(connection: object, methods: string[], seen: (error: unknown) => void): void {
  const target = connection as Record<string, Method>;
  for (const name of methods) {
    const original = (target[name] as Method).bind(connection);
    target[name] = (...args: unknown[]) => {
      const last = args[args.length - 1];
      if (typeof last === "function") {
        args[args.length - 1] = (error: unknown, ...rest: unknown[]) => {
          if (error) seen(error);
          return (last as Method)(error, ...rest);
        };
        return original(...args);
      }
      const result = original(...args);
      if (result instanceof Promise) result.catch(seen);
      return result;
    };
  }
}

export function watchPostgresDeadlocks(pool: pg.Pool): DeadlockWatch {
  let deadlocks = 0;
  pool.on("connect", (client) =>
    tapErrors(client, ["query"], (error) => {
      if ((error as { code?: string }).code === "40P01") deadlocks++;
    }),
  );
  return { count: () => deadlocks };
}

export function watchMysqlDeadlocks(pool: MysqlPool): DeadlockWatch {
  let deadlocks = 0;
  // The promise pool's core pool hands out the callback connections its statements run on.
  (
    pool as unknown as { pool: { on(event: "connection", listener: (c: object) => void): void } }
  ).pool.on("connection", (connection) =>
    tapErrors(connection, ["query", "execute"], (error) => {
      if ((error as { errno?: number }).errno === 1213) deadlocks++;
    }),
  );
  return { count: () => deadlocks };
}
