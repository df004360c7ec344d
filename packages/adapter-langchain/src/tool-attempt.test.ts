import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it, vi } from "vitest";
import { beforeToolCall } from "./tool-attempt.js";

const actor = { type: "agent", id: "a" } as const;
const address = { sessionId: "s", runId: "r" };

describe("beforeToolCall", () => {
  it("costs a sub-agent's call on a resumed run a bounded number of lookups, not a scan of the run's recorded calls", async () => {
    // Every call skipped earlier turns' calls and looked for a renamed one by scanning all the
    // run's recorded tool calls, on replay and for as long as the resumed run went on: a run of
    // 5,000 recorded calls spent about a second, 20,000 about 28 s, replaying its calls.
    const count = 1000;
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const causes: string[] = [];
    for (let index = 0; index < count; index++) {
      const model = await recorder.beforeModelCall({ request: { index } });
      const { eventId } = await recorder.modelCompleted(model, { index });
      causes.push(eventId);
      const options = { toolCallId: `c${index}`, name: "search", args: { index } };
      const attempt = await recorder.beforeToolCall({ ...options, causedByEventId: eventId });
      await recorder.toolCompleted(attempt, { index });
    }
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const inside = { insideTool: true, sameTurn: () => false };
    const lookups = vi.spyOn(Set.prototype, "has");
    try {
      for (let index = 0; index < count; index++) {
        const options = { toolCallId: `c${index}`, name: "search", args: { index } };
        const causedByEventId = causes[index] as string;
        const { attempt } = await beforeToolCall(resumed, { ...options, causedByEventId }, inside);
        expect(attempt.replayed).toMatchObject({ status: "completed", result: { index } });
      }
      // Past the frontier the run goes on: the sub-agent's new calls run live.
      const causedByEventId = causes[count - 1] as string;
      for (let index = 0; index < count; index++) {
        const options = { toolCallId: `n${index}`, name: "search", args: { index } };
        const { attempt } = await beforeToolCall(resumed, { ...options, causedByEventId }, inside);
        expect(attempt.replayed).toBeUndefined();
        await resumed.toolCompleted(attempt, { index });
      }
      expect(lookups.mock.calls.length).toBeLessThan(40 * count);
    } finally {
      lookups.mockRestore();
    }
  });
});
