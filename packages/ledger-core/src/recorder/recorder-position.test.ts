import { describe, expect, it } from "vitest";
import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

const actor = { type: "agent", id: "position" } as const;

describe("SessionRecorder.length", () => {
  it("counts the events the recorder read on resume and committed since, not another writer's", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s1", runId: "r1", actor });
    expect(recorder.length).toBe(0);
    await recorder.startRun();
    const call = await recorder.beforeModelCall({ request: { prompt: "hi" } });
    expect(recorder.length).toBe(2);
    await recorder.modelCompleted(call, { text: "hello" });
    expect(recorder.length).toBe(3);

    const person = await SessionRecorder.resume({ store, sessionId: "s1", runId: "r1", actor });
    expect(person.length).toBe(3);
    await person.checkpoint({ note: "a person's event" });
    expect(person.length).toBe(4);
    // The first writer does not see it: its next append would meet conflict.
    expect(recorder.length).toBe(3);
    expect((await store.runHead({ sessionId: "s1", runId: "r1" })).length).toBe(4);
  });
});

describe("SessionRecorder.recordedChildRuns", () => {
  it("lists a resumed run's child runs as loaded, for its adopted children too; none for a new run", async () => {
    const store = new MemoryEventStore();
    const top = new SessionRecorder({ store, sessionId: "s1", runId: "top", actor });
    expect(top.recordedChildRuns()).toEqual([]);
    await top.startRun();
    const tool = await top.beforeToolCall({ toolCallId: "c1", name: "delegate", args: {} });
    const child = top.child({ actor, runId: "child", causedByEventId: tool.requestedEventId });
    await child.startRun();
    const grandchild = child.child({ actor, runId: "grandchild" });
    await grandchild.startRun();
    await grandchild.completeRun();

    const resumed = await SessionRecorder.resume({ store, sessionId: "s1", runId: "top", actor });
    expect(resumed.recordedChildRuns().map((run) => [run.runId, run.status])).toEqual([
      ["child", "running"],
    ]);
    const adopted = resumed.child({ actor, causedByEventId: tool.requestedEventId });
    expect(adopted.runId).toBe("child");
    expect(adopted.recordedChildRuns().map((run) => [run.runId, run.status])).toEqual([
      ["grandchild", "completed"],
    ]);
  });
});
