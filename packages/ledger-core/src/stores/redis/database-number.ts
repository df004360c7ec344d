import { InvalidArgumentError } from "../../events/errors.js";

/**
 * Refuses a Redis URL whose database (its path, or `?db=`) is not a whole number, or that gives
 * it both ways. ioredis reads it with parseInt: `/1.5` selected database 1 and `/0x0d` database
 * 0, another application's keys; `/abc` sent SELECT NaN, whose refusal reached no caller (an
 * unhandled rejection). With both, ioredis took the path and ignored `?db=`.
 */
export function assertDatabaseNumber(url: URL): void {
  const fromPath = url.pathname === "" || url.pathname === "/" ? undefined : url.pathname.slice(1);
  const fromQuery = url.searchParams.get("db") ?? undefined;
  for (const value of [fromPath, fromQuery])
    if (value !== undefined && !/^\d{1,9}$/.test(value))
      throw new InvalidArgumentError(
        "$.url",
        `the database a Redis URL selects is a whole number (redis://host:6379/2), not ${JSON.stringify(value)}`,
      );
  if (fromPath !== undefined && fromQuery !== undefined && Number(fromPath) !== Number(fromQuery))
    throw new InvalidArgumentError(
      "$.url",
      `the Redis URL selects database ${fromPath} in its path and ${fromQuery} with ?db=: give one`,
    );
}
