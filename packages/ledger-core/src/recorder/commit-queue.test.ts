import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import type { AppendRequest } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-queue-", afterAll);

const actor: Actor = { type: "agent", id: "shop" };
const address = { sessionId: "s", runId: "r" };

/**
 * The real SQLite store behind a connection that can drop: `loseReplies` appends commit and
 * then fail as the reply is lost; `down` appends fail before reaching the database.
 */
class DroppingStore extends SqliteEventStore {
  loseReplies = 0;
  down = 0;
  override async append(request: AppendRequest) {
    if (this.down > 0) {
      this.down--;
      throw new LedgerError("store-unavailable", "connection refused");
    }
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

  it("after every try lost its reply, the next call finds the committed events and goes on", async () => {
    const store = await open("lost-all.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    store.loseReplies = 3;
    await expect(recorder.beforeModelCall({ request: { prompt: "hi" } })).rejects.toMatchObject({
      code: "store-unavailable",
    });
    const next = await recorder.beforeModelCall({ request: { prompt: "hi again" } });
    expect(next.seq).toBe(2);
    await store.close();
  });

  it("a writer whose store was unreachable does not append on top of a resumed process", async () => {
    const oldStore = await open("zombie.db");
    const old = new SessionRecorder({ store: oldStore, ...address, actor });
    await old.startRun();
    const model = await old.beforeModelCall({ request: { prompt: "pay 5" } });
    await old.modelCompleted(model, { toolCalls: [{ id: "pay-1" }] });
    const pay = { toolCallId: "pay-1", name: "pay", args: { amount: 5 } };
    // The old process loses its connection: every try of this append fails.
    oldStore.down = 3;
    await expect(old.beforeToolCall(pay)).rejects.toMatchObject({ code: "store-unavailable" });

    // Meanwhile a new process resumes the run and pays.
    const newStore = await open("zombie.db");
    const resumed = await SessionRecorder.resume({ store: newStore, ...address, actor });
    await resumed.beforeModelCall({ request: { prompt: "pay 5" } });
    const paid = await resumed.beforeToolCall(pay);
    expect(paid.replayed).toBeUndefined();

    // The old process's connection comes back: it must lose, not pay a second time.
    await expect(old.beforeToolCall(pay)).rejects.toMatchObject({ code: "conflict" });
    await resumed.toolCompleted(paid, "paid");
    const requested = (await readWholeRun(newStore, address)).filter(
      (event) => event.type === "tool.requested",
    );
    expect(requested).toHaveLength(1);
    await oldStore.close();
    await newStore.close();
  });
});

describe("commit queue: a group commit with one bad event", () => {
  it("fails only the caller whose event is bad; the parallel tool calls are committed", async () => {
    const store = await open("bad-neighbour.db");
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    // Notes keyed by an id of the user's (a webhook delivery): the second reuses the first's.
    await recorder.record({ type: "x.note", eventId: "delivery-7", payload: { n: 1 } });
    const [first, note, second] = await Promise.allSettled([
      recorder.beforeToolCall({ toolCallId: "c1", name: "lookup", args: { q: 1 } }),
      recorder.record({ type: "x.note", eventId: "delivery-7", payload: { n: 2 } }),
      recorder.beforeToolCall({ toolCallId: "c2", name: "lookup", args: { q: 2 } }),
    ]);
    expect(note).toMatchObject({ status: "rejected", reason: { code: "duplicate-event" } });
    expect(first.status).toBe("fulfilled");
    expect(second.status).toBe("fulfilled");
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "x.note",
      "tool.requested",
      "tool.requested",
    ]);
    await store.close();
  });
});
