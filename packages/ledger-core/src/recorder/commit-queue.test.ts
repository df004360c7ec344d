import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import type { AppendRequest } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = mkdtempSync(join(tmpdir(), "agent-ledger-queue-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const actor: Actor = { type: "agent", id: "shop" };
const address = { sessionId: "s", runId: "r" };

/** The real SQLite store behind a connection that loses the reply of `loseReplies` appends. */
class DroppingStore extends SqliteEventStore {
  loseReplies = 0;
  override async append(request: AppendRequest) {
    const result = await super.append(request);
    if (this.loseReplies > 0) {
      this.loseReplies--;
      throw new LedgerError("store-unavailable", "connection reset after commit");
    }
    return result;
  }
}

async function open(file: string) {
  const store = new DroppingStore({ path: join(dir, file) });
  await store.init();
  return store;
}

describe("commit queue: appends whose outcome is unknown", () => {
  it("a reply lost after the commit is retried as the same events, not reported as a conflict", async () => {
    const store = await open("lost-reply.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    store.loseReplies = 1;
    const attempt = await recorder.beforeModelCall({ request: { prompt: "hi" } });
    expect(attempt.seq).toBe(1);
    await recorder.modelCompleted(attempt, "hello");
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
    ]);
    await store.close();
  });
});
