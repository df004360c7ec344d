import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import type { RecordedAttempt } from "../replay/replay-cursor.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SessionRecorder } from "./session-recorder.js";

const actor: Actor = { type: "agent", id: "planner" };
const address = { sessionId: "session-1", runId: "run-1" };

/** Accepts the attempts recorded with `metadata.thread === thread`. */
const inThread = (thread: string) => (recorded: RecordedAttempt) =>
  recorded.requested.metadata?.thread === thread;

/**
 * A run in which two conversations gave their tool calls the same id: thread "a"'s call
 * completed, thread "b"'s was in flight when the process stopped.
 */
async function twoThreadsOneId(): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, ...address, actor });
  await recorder.startRun();
  const a = await recorder.beforeToolCall({
    toolCallId: "call_1",
    name: "send",
    args: { to: "ann" },
    metadata: { thread: "a" },
  });
  await recorder.toolCompleted(a, "sent to ann");
  await recorder.beforeToolCall({
    toolCallId: "call_1",
    name: "send",
    args: { to: "bob" },
    metadata: { thread: "b" },
  });
  return store;
}

describe("beforeToolCall's replayAccepts", () => {
  it("matches a tool call only with the recorded attempts it accepts, whatever order they come in", async () => {
    const store = await twoThreadsOneId();
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    // Thread b's call first: by id alone it would meet thread a's attempt (another request).
    const error = await resumed
      .beforeToolCall({
        toolCallId: "call_1",
        name: "send",
        args: { to: "bob" },
        replayAccepts: inThread("b"),
      })
      .catch((caught: unknown) => caught);
    if (!LedgerError.isInstance(error, "unresolved-attempt")) throw error;
    expect(error.attempt?.toolCallId).toBe("call_1");
    expect(error.attempt?.seq).toBe(3);
    // Thread a's attempt was passed over, not used up: its call is answered from the ledger.
    const a = await resumed.beforeToolCall({
      toolCallId: "call_1",
      name: "send",
      args: { to: "ann" },
      replayAccepts: inThread("a"),
    });
    expect(a.replayed).toMatchObject({ status: "completed", result: "sent to ann" });
    const types = (await readWholeRun(store, address)).map((event) => event.type);
    expect(types).toEqual(["run.started", "tool.requested", "tool.completed", "tool.requested"]);
  });

  it("without it the first recorded attempt of the id is the match (another request diverges)", async () => {
    const store = await twoThreadsOneId();
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const error = await resumed
      .beforeToolCall({ toolCallId: "call_1", name: "send", args: { to: "bob" } })
      .catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "replay-divergence"), String(error)).toBe(true);
  });

  it("must answer true or false: an async predicate (a promise, truthy) is refused, nothing recorded", async () => {
    const store = await twoThreadsOneId();
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const error = await resumed
      .beforeToolCall({
        toolCallId: "call_1",
        name: "send",
        args: { to: "bob" },
        replayAccepts: (async () => false) as never,
      })
      .catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect((error as LedgerError).path).toBe("$.replayAccepts");
    expect(await readWholeRun(store, address)).toHaveLength(4);
  });

  it("is refused when it is not a function, before anything is recorded", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const error = await recorder
      .beforeToolCall({ name: "send", args: {}, replayAccepts: "b" as never })
      .catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
    expect((error as LedgerError).path).toBe("$.replayAccepts");
    expect((await readWholeRun(store, address)).map((event) => event.type)).toEqual([
      "run.started",
    ]);
  });
});

describe("beforeModelCall's replayAccepts", () => {
  /** Thread "a" asked the model once (completed); then thread "b" the same, left in flight. */
  async function twoThreadsOneRequest(): Promise<MemoryEventStore> {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const a = await recorder.beforeModelCall({
      request: { prompt: "hi" },
      metadata: { thread: "a" },
    });
    await recorder.modelCompleted(a, { text: "hello a" });
    await recorder.beforeModelCall({ request: { prompt: "hi" }, metadata: { thread: "b" } });
    return store;
  }

  it("matches a model call only with the next recorded attempt it accepts; the others stay", async () => {
    const store = await twoThreadsOneRequest();
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    // Thread b first: in order it would meet thread a's call, and be answered with a's reply.
    const b = await resumed.beforeModelCall({
      request: { prompt: "hi" },
      metadata: { thread: "b" },
      replayAccepts: inThread("b"),
    });
    // In flight at the crash: made again, as a retry of b's attempt.
    expect(b.replayed).toBeUndefined();
    const recorded = await readWholeRun(store, address);
    expect(b.retryOf).toBe(recorded[3]?.attemptId);
    const a = await resumed.beforeModelCall({
      request: { prompt: "hi" },
      replayAccepts: inThread("a"),
    });
    expect(a.replayed).toMatchObject({ status: "completed", result: { text: "hello a" } });
    // A thread with no recorded call (c) is a new call: its own step, no retryOf.
    const c = await resumed.beforeModelCall({
      request: { prompt: "hi" },
      metadata: { thread: "c" },
      replayAccepts: inThread("c"),
    });
    expect(c.retryOf).toBeUndefined();
    expect(new Set([recorded[1]?.stepId, recorded[3]?.stepId]).has(c.stepId)).toBe(false);
  });

  it("is refused unless it is a function, and an async one when it answers, nothing recorded", async () => {
    const store = await twoThreadsOneRequest();
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const before = await readWholeRun(store, address);
    for (const replayAccepts of ["b", async () => true]) {
      const error = await resumed
        .beforeModelCall({ request: { prompt: "hi" }, replayAccepts: replayAccepts as never })
        .catch((caught: unknown) => caught);
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      expect((error as LedgerError).path).toBe("$.replayAccepts");
    }
    expect(await readWholeRun(store, address)).toEqual(before);
  });
});
