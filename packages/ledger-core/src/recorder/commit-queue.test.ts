import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LedgerError, StoreUnavailableError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import type { AppendRequest, ReadRunRequest } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-queue-", { beforeAll, afterAll });

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

/**
 * A store whose connection goes away as a server's does: appends fail with the driver's error
 * as `cause` (`appendsDown`; after committing when `commitFirst`), then reads too
 * (`readsDown`). Counts the calls that reach it.
 */
class OutageStore extends SqliteEventStore {
  appendsDown = 0;
  commitFirst = false;
  readsDown = 0;
  appends = 0;
  reads = 0;
  override async append(request: AppendRequest) {
    this.appends++;
    if (this.appendsDown > 0) {
      this.appendsDown--;
      if (this.commitFirst) await super.append(request);
      throw new StoreUnavailableError(
        "sqlite append failed: Connection terminated unexpectedly",
        new Error("Connection terminated unexpectedly"),
      );
    }
    return super.append(request);
  }
  override async readRun(request: ReadRunRequest) {
    this.reads++;
    if (this.readsDown > 0) {
      this.readsDown--;
      throw new StoreUnavailableError(
        "sqlite readRun failed: connect ECONNREFUSED",
        new Error("connect ECONNREFUSED"),
      );
    }
    return super.readRun(request);
  }
}

describe("commit queue: the store goes away after an append whose outcome is unknown", () => {
  for (const commitFirst of [false, true]) {
    it(`the next call fails with that append's failure, the read back's kept beside it (${commitFirst ? "it was written" : "it was not"})`, async () => {
      const store = new OutageStore({ path: join(dir, `outage-${commitFirst}.db`) });
      await store.init();
      const recorder = new SessionRecorder({ store, ...address, actor });
      await recorder.startRun();
      const model = await recorder.beforeModelCall({ request: { prompt: "pay 5" } });
      await recorder.modelCompleted(model, { toolCalls: [{ id: "pay-1" }] });
      const pay = await recorder.beforeToolCall({ toolCallId: "pay-1", name: "pay", args: {} });

      // The tool ran; recording its result fails, every try (the recorder tries three times).
      store.appendsDown = 3;
      store.commitFirst = commitFirst;
      const first = await recorder.toolCompleted(pay, "paid").then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(first).toMatchObject({
        code: "store-unavailable",
        message: "sqlite append failed: Connection terminated unexpectedly",
      });

      // The next call must first read the run back, and that read fails too.
      store.readsDown = 1;
      const appendsBefore = store.appends;
      const next = await recorder.beforeModelCall({ request: { prompt: "again" } }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(LedgerError.isInstance(next, "store-unavailable")).toBe(true);
      const failure = next as LedgerError;
      expect(failure.message).toMatch(
        /^sqlite append failed: Connection terminated unexpectedly: whether the append of tool\.completed \(seq 4 of run r in session s\) was written is unknown, and reading the run back to find out failed too \(sqlite readRun failed: connect ECONNREFUSED\); this call's events were not sent$/,
      );
      expect(failure.cause).toBe((first as LedgerError).cause);
      expect(failure.details).toMatchObject({
        sessionId: "s",
        runId: "r",
        fromSeq: 4,
        eventTypes: ["tool.completed"],
        readError: {
          code: "store-unavailable",
          message: "sqlite readRun failed: connect ECONNREFUSED",
        },
      });
      expect(store.appends).toBe(appendsBefore);

      // The store is back: the next call reads the run back first, then appends where it ends.
      const readsBefore = store.reads;
      const again = await recorder.beforeModelCall({ request: { prompt: "again" } });
      expect(store.reads).toBe(readsBefore + 1);
      expect(again.seq).toBe(commitFirst ? 5 : 4);
      const events = await readWholeRun(store, address);
      expect(events.map((event) => event.type)).toEqual([
        "run.started",
        "model.requested",
        "model.completed",
        "tool.requested",
        ...(commitFirst ? ["tool.completed"] : []),
        "model.requested",
      ]);
      await store.close();
    });
  }
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
