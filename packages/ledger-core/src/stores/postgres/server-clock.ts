import { sql } from "drizzle-orm";

/** Now on the server's clock, in epoch ms: blob put times and the retention grace use it. */
export const SERVER_EPOCH_MS = "(extract(epoch from clock_timestamp()) * 1000)::bigint";
export const serverEpochMs = sql.raw(SERVER_EPOCH_MS);
