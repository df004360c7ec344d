import { describe, expect, it } from "vitest";
import type { JsonValue } from "../events/json.js";
import type { Actor } from "../events/types.js";
import { MemoryEventStore } from "../store/memory-store.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

const actor: Actor = { type: "agent", id: "summariser" };
const address = { sessionId: "s", runId: "r" };
const parts = [{ prompt: "summarise part 1" }, { prompt: "summarise part 2" }];
const fetches = [
  { name: "fetch", args: { url: 1 }, effect: { kind: "read", idempotent: true } },
  { name: "fetch", args: { url: 2 }, effect: { kind: "read", idempotent: true } },
] as const;

/** What the ledger answered a call with, if it completed before the crash. */
function recorded(call: Attempt | undefined): JsonValue | undefined {
  return call?.replayed?.status === "completed" ? call.replayed.result : undefined;
}

/** Two model calls made together (a fan-out), each completed with the summary of its part. */
async function fanOut(recorder: SessionRecorder) {
  const calls = await Promise.all(parts.map((request) => recorder.beforeModelCall({ request })));
  await Promise.all(
    calls.map((call, index) => recorder.modelCompleted(call, `summary ${index + 1}`)),
  );
}

describe("calls made together are matched in the order they were made", () => {
  it("two model calls made together as the first calls after resume are both answered", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, ...address, actor });
    await first.startRun();
    await fanOut(first);
    // The process dies; the new one re-executes the same fan-out before anything else.
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const again = await Promise.all(parts.map((request) => resumed.beforeModelCall({ request })));
    expect(again.map(recorded)).toEqual(["summary 1", "summary 2"]);
  });

  it("two calls of one tool without toolCallId, first after resume: the finished one is answered", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, ...address, actor });
    await first.startRun();
    const [, second] = await Promise.all(fetches.map((call) => first.beforeToolCall(call)));
    await first.toolCompleted(second as Attempt, "page 2"); // the first is in flight at the crash
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const [x, y] = await Promise.all(fetches.map((call) => resumed.beforeToolCall(call)));
    expect(x?.replayed).toBeUndefined();
    expect(x?.retryOf).toBeTypeOf("string");
    expect(y?.replayed).toMatchObject({ status: "completed", result: "page 2" });
  });

  it("a sub-agent of a resumed run answers its first calls made together, while it reads its run", async () => {
    const store = new MemoryEventStore();
    const parent = new SessionRecorder({ store, ...address, actor });
    await parent.startRun();
    const helper = parent.child({ actor: { type: "agent", id: "helper" } });
    await helper.startRun();
    await fanOut(helper);
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    await resumed.startRun();
    const again = resumed.child({ actor: { type: "agent", id: "helper" } });
    // startRun and both calls wait while the child reads its recorded run, in this order.
    const [started, ...calls] = await Promise.all([
      again.startRun(),
      ...parts.map((request) => again.beforeModelCall({ request })),
    ]);
    expect(started?.runId).toBe(helper.runId);
    expect(
      calls.map((call) => (call as { replayed?: { result: unknown } }).replayed?.result),
    ).toEqual(["summary 1", "summary 2"]);
  });

  it("a new recorder records calls made together as its first calls in the order they were made", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const calls = await Promise.all(parts.map((request) => recorder.beforeModelCall({ request })));
    expect(calls.map((call) => call.request)).toEqual(parts);
    expect(calls.map((call) => call.seq)).toEqual([0, 1]);
  });
});
