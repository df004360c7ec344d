import { sql } from "drizzle-orm";

/**
 * Now on the server's clock, in epoch ms: blob put times and the retention grace use it. UTC
 * arithmetic, so the session's time zone (and its daylight saving hour) plays no part.
 */
export const SERVER_EPOCH_MS =
  "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";
export const serverEpochMs = sql.raw(SERVER_EPOCH_MS);
