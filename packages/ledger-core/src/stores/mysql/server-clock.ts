import { sql } from "drizzle-orm";

/**
 * Now on the server's clock, in epoch ms: blob put times and the retention grace use it. UTC
 * arithmetic, so the session's time zone (and its daylight saving hour) plays no part.
 */
export const SERVER_EPOCH_MS =
  "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) DIV 1000)";
export const serverEpochMs = sql.raw(SERVER_EPOCH_MS);

/**
 * SERVER_EPOCH_MS as the statement runs, not as it began: UTC_TIMESTAMP (as NOW) is fixed for
 * a statement, and a compound block is one statement, so a blob upsert in a block stamped the
 * block's start, before the block waited for locks. The time since the start is added
 * (SYSDATE runs on; both in the session's zone, whose offset cancels out).
 */
export const SERVER_EPOCH_MS_LIVE =
  "((TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(6)) + TIMESTAMPDIFF(MICROSECOND, NOW(6), SYSDATE(6))) DIV 1000)";
