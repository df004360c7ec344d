import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SqliteEventStore } from "../stores/sqlite/index.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import type { Attempt } from "./attempt.js";
import { setRunLogBudget } from "./run-log.js";
import { SessionRecorder } from "./session-recorder.js";

const dir = scratchDirectory("agent-ledger-replay-again-", { beforeAll, afterAll });
const actor = { type: "agent", id: "server" } as const;
const address = { sessionId: "replay-again", runId: "run-1" };

async function sqlite(): Promise<SqliteEventStore> {
  const store = new SqliteEventStore({ path: join(dir, `${crypto.randomUUID()}.db`) });
  await store.init();
  return store;
}

/** How often the run is read, and how many blobs are fetched, from now on. */
function watchReads(store: EventStore) {
  const reads = { run: 0, blobs: 0 };
  const { readRun, getBlob, getBlobs } = store;
  store.readRun = (request) => {
    if (request.runId === address.runId) reads.run++;
    return readRun.call(store, request);
  };
  store.getBlob = (ref) => {
    reads.blobs++;
    return getBlob.call(store, ref);
  };
  if (getBlobs)
    store.getBlobs = (refs) => {
      reads.blobs += refs.length;
      return getBlobs.call(store, refs);
    };
  return reads;
}

/** Long enough to go to a blob of its own (§8). */
const long = (what: string) =>
  `${what}: ${"the quick brown fox jumps over the lazy dog ".repeat(40)}`;

/** Tool call `id` of conversation `conversation` (what `select` tells them apart by). */
const call = (id: string, conversation: string) => ({
  toolCallId: id,
  name: "send",
  args: { id, body: long(id) },
  metadata: { conversation },
});

/** Takes the calls of conversation `conversation`. */
const ofConversation = (conversation: string) => (attempt: { requested: { metadata?: unknown } }) =>
  (attempt.requested.metadata as { conversation?: string } | undefined)?.conversation ===
  conversation;

describe("replayAgain", () => {
  it("answers again the calls it selects, on the same recorder: those in progress complete on it once", async () => {
    const store = await sqlite();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    await recorder.toolCompleted(await recorder.beforeToolCall(call("a-1", "a")), long("sent a-1"));
    // Conversation b's call is in flight while conversation a is run again.
    const inFlight = await recorder.beforeToolCall(call("b-1", "b"));
    const reads = watchReads(store);

    const replay = await recorder.replayAgain({ select: ofConversation("a") });
    expect(recorder.replay).toBe(replay);
    expect(replay.unmatchedTools().map((attempt) => attempt.toolCallId)).toEqual(["a-1"]);
    // A new recorder keeps none of its run: it reads it once.
    expect(reads.run).toBeGreaterThan(0);

    const length = recorder.length;
    const again = await recorder.beforeToolCall(call("a-1", "a"));
    expect(again.replayed).toMatchObject({ status: "completed", result: long("sent a-1") });
    expect(recorder.length).toBe(length);
    // b's call goes on as made: its one outcome is recorded, nothing else of it is written.
    await recorder.toolCompleted(inFlight, long("sent b-1"));
    const requests = (await readWholeRun(store, address)).filter(
      (event) => event.type === "tool.requested",
    );
    expect(requests.map((event) => (event.payload as { toolCallId: string }).toolCallId)).toEqual([
      "a-1",
      "b-1",
    ]);

    // From then on it keeps its run: b run again is answered from what it wrote, read from
    // nowhere (its blobs included), and a reopen reads only what other writers appended.
    reads.run = 0;
    reads.blobs = 0;
    const b = await recorder.replayAgain({ select: ofConversation("b") });
    expect(b.unmatchedTools().map((attempt) => [attempt.toolCallId, attempt.status])).toEqual([
      ["b-1", "completed"],
    ]);
    expect((await recorder.beforeToolCall(call("b-1", "b"))).replayed).toMatchObject({
      result: long("sent b-1"),
    });
    expect(reads).toEqual({ run: 0, blobs: 0 });
    const reopened = await recorder.reopen();
    expect(reads).toEqual({ run: 1, blobs: 0 });
    expect(reopened.length).toBe(recorder.length);
    await store.close();
  });

  it("keeps what the recorder commits while it reads its run", async () => {
    const store = await sqlite();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const inFlight: Attempt = await recorder.beforeToolCall(call("a-1", "a"));
    // The call ends while the run is read: after the events the read returns.
    const { readRun } = store;
    let ended: Promise<unknown> | undefined;
    const returned: string[] = [];
    store.readRun = async (request) => {
      const page = await readRun.call(store, request);
      returned.push(...page.events.map((event) => event.type));
      ended ??= recorder.toolCompleted(inFlight, long("sent a-1"));
      await ended;
      return page;
    };
    const first = await recorder.replayAgain({ select: ofConversation("a") });
    store.readRun = readRun;
    const read = await readWholeRun(store, address);
    expect(returned).not.toContain("tool.completed");
    // The outcome the read did not return is in the replay, and in what the recorder keeps:
    // run again, the call is answered with it, nothing read.
    expect(first.unmatchedTools().map((attempt) => attempt.status)).toEqual(["completed"]);
    const reads = watchReads(store);
    const again = await recorder.replayAgain({ select: ofConversation("a") });
    expect(again.unmatchedTools().map((attempt) => attempt.outcome?.eventId)).toEqual([
      read.at(-1)?.eventId,
    ]);
    expect(reads).toEqual({ run: 0, blobs: 0 });
    // Its reopen finds no event missing: it reads only from where the recorder ends.
    await recorder.reopen();
    expect(reads.run).toBe(1);
    await store.close();
  });

  it("gives the replay of the last call made, when several are made at once", async () => {
    const store = await sqlite();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    for (const [id, conversation] of [
      ["a-1", "a"],
      ["b-1", "b"],
    ] as const)
      await recorder.toolCompleted(await recorder.beforeToolCall(call(id, conversation)), "sent");
    // The first one's read of the run is the slower.
    const { readRun } = store;
    let slow = true;
    store.readRun = async (request) => {
      const wait = slow;
      slow = false;
      if (wait) await new Promise((resolve) => setTimeout(resolve, 50));
      return readRun.call(store, request);
    };
    const [, last] = await Promise.all([
      recorder.replayAgain({ select: ofConversation("a") }),
      recorder.replayAgain({ select: ofConversation("b") }),
    ]);
    expect(recorder.replay).toBe(last);
    expect(last.unmatchedTools().map((attempt) => attempt.toolCallId)).toEqual(["b-1"]);
    await store.close();
  });

  it("is refused without a select function, and on a recorder that was reopened", async () => {
    const store = await sqlite();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    for (const options of [undefined, {}, { select: "a" }]) {
      const refusal = await recorder.replayAgain(options as never).catch((error) => error);
      expect(LedgerError.isInstance(refusal, "invalid-argument")).toBe(true);
      expect(refusal.path).toBe("$.select");
    }
    await recorder.reopen();
    await expect(recorder.replayAgain({ select: () => true })).rejects.toMatchObject({
      code: "invalid-argument",
      message: expect.stringContaining("reopen() returned"),
    });
    await store.close();
  });
});

describe("replayAgain past the budget of what a recorder keeps (RunLog)", () => {
  let restore: (() => void) | undefined;
  afterEach(() => {
    restore?.();
    restore = undefined;
  });

  /**
   * A recorder given a replay of conversation a (it then keeps its run), that sends 8 results of
   * 16 KiB in conversation b and is given a replay of b twice: whether each read the run, what
   * each answers, and b's third call met again.
   */
  async function replaysOfB() {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    await recorder.toolCompleted(await recorder.beforeToolCall(call("a-1", "a")), long("sent a-1"));
    await recorder.replayAgain({ select: ofConversation("a") });
    for (let n = 1; n <= 8; n++)
      await recorder.toolCompleted(
        await recorder.beforeToolCall(call(`b-${n}`, "b")),
        `${long(`sent b-${n}`)} ${"0123456789abcdef".repeat(1024)}`,
      );
    const reads = watchReads(store);
    const read: boolean[] = [];
    const answers: unknown[] = [];
    for (let time = 0; time < 2; time++) {
      reads.run = 0;
      const replay = await recorder.replayAgain({ select: ofConversation("b") });
      read.push(reads.run > 0);
      answers.push(
        replay.unmatchedTools().map((attempt) => ({
          toolCallId: attempt.toolCallId,
          status: attempt.status,
          requested: attempt.requested.payload,
          outcome: attempt.outcome?.payload,
        })),
      );
    }
    const { replayed } = await recorder.beforeToolCall(call("b-3", "b"));
    const again = replayed?.status === "completed" ? replayed.result : replayed;
    return { read, answers, again, length: recorder.length };
  }

  it("reads the run again once the recorder kept more than the budget, and answers as one that kept it", async () => {
    const kept = await replaysOfB();
    // Within the default budget: nothing read.
    expect(kept.read).toEqual([false, false]);
    expect(kept.again).toEqual(expect.stringContaining("sent b-3"));
    restore = setRunLogBudget(64 * 1024);
    const bounded = await replaysOfB();
    // 128 KiB committed: the log was dropped, and the run read whole is over the budget too, so
    // it is not kept either: each replay reads it.
    expect(bounded.read).toEqual([true, true]);
    expect(bounded.answers).toEqual(kept.answers);
    expect(bounded.again).toEqual(kept.again);
    expect(bounded.length).toBe(kept.length);
  });
});
