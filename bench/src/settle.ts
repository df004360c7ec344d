import { execFileSync } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { SERVER_URLS } from "@agent-ledger/core/testing";
import pg from "pg";

/**
 * Lets the disk catch up before a store is measured: PostgreSQL writes what its last
 * checkpoint left dirty (CHECKPOINT), the kernel writes back every dirty page (sync), then a
 * second of quiet. Without it, the write-back of the suite before (the core suite's 100k-event
 * SQLite files, PostgreSQL's WAL and checkpoints) lands in the next store's measured rounds:
 * MariaDB's 8 writers measured 0.58x-0.61x of 8 raw writers right after the other suites and
 * 0.75x-0.78x alone, the same hour. A store that writes more per commit (ours, against a one-row
 * insert) pays more for a disk busy with someone else's pages. Best effort: a step that cannot
 * run (no sync binary, PostgreSQL not there, no right to CHECKPOINT) is skipped.
 */
export async function settle(): Promise<void> {
  const client = new pg.Client({
    connectionString: SERVER_URLS.postgres,
    connectionTimeoutMillis: 2000,
  });
  try {
    await client.connect();
    await client.query("CHECKPOINT");
  } catch {
    // Not there, or not a superuser (nor a pg_checkpoint member): the sync below still runs.
  } finally {
    await client.end().catch(() => {});
  }
  try {
    execFileSync("sync", { stdio: "ignore" });
  } catch {
    // No sync(1): the pause alone.
  }
  await sleep(1000);
}
