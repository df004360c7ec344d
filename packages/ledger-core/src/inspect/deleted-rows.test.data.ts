// A session whose rows were deleted by hand: what inspect-session.test.ts and seq-gaps.test.ts
// read, each expecting the same runs to be not intact.
import Database from "better-sqlite3";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";

/**
 * A closed run of 5 events (a tool call that completed, then its run) and a child run, on a
 * SQLite file at `path` from which the rows at `deleted` seqs of run main were then deleted by
 * hand; the store opened again on it.
 */
export async function sessionWithDeletedRows(
  path: string,
  deleted: number[],
): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path });
  await store.init();
  const main = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "main",
    actor: { type: "agent", id: "a" },
  });
  await main.startRun();
  const call = await main.beforeToolCall({ toolCallId: "c1", name: "pay", args: { amount: 5 } });
  await main.toolCompleted(call, { paid: true });
  await main.recordInput("thanks");
  const child = main.child({ runId: "child", actor: { type: "agent", id: "b" } });
  await child.startRun();
  await main.completeRun("done");
  await store.close();
  const database = new Database(path);
  const remove = database.prepare("DELETE FROM events WHERE run_id = 'main' AND seq = ?");
  for (const seq of deleted) {
    const changes = remove.run(seq).changes;
    if (changes !== 1) throw new Error(`deleted ${changes} rows at seq ${seq}, not 1`);
  }
  database.close();
  const reopened = new SqliteEventStore({ path });
  await reopened.init();
  return reopened;
}
