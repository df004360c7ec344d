import { describe, expect, it } from "vitest";
import { hashJson } from "../events/canonical.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { ReplayCursor } from "./replay-cursor.js";

const actor = { type: "agent", id: "a" } as const;
const request = (turn: number) => ({ model: "m", turn });
const pay = { name: "pay", args: { amount: 1 } };

/** Three completed model calls, then a payment c1 in flight. */
async function recordedRun() {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  for (let turn = 0; turn < 3; turn++)
    await recorder.modelCompleted(await recorder.beforeModelCall({ request: request(turn) }), "ok");
  await recorder.beforeToolCall({ toolCallId: "c1", ...pay });
  return readWholeRun(store, { sessionId: "s", runId: "r" });
}

describe("ReplayCursor.giveBack", () => {
  it("makes a model match given back the next call's again; the calls matched after it stay matched", async () => {
    const cursor = new ReplayCursor(await recordedRun());
    const first = cursor.takeModel(hashJson(request(0)));
    const second = cursor.takeModel(hashJson(request(1)));
    expect(cursor.remaining).toBe(2);
    cursor.giveBack(first as NonNullable<typeof first>);
    expect(cursor.remaining).toBe(3);
    expect(cursor.takeModel(hashJson(request(0)))?.attempt).toBe(first?.attempt);
    // The second stays matched: the next call is the third.
    expect(cursor.takeModel(hashJson(request(2)))?.attempt.requestHash).toBe(hashJson(request(2)));
    expect(second?.attempt.requestHash).toBe(hashJson(request(1)));
    expect(cursor.remaining).toBe(1);
  });

  it("makes a tool match given back unmatched, matched again by the same call; twice is once", async () => {
    const cursor = new ReplayCursor(await recordedRun());
    const call = { toolCallId: "c1", ...pay, requestHash: hashJson(pay), request: pay };
    const match = cursor.takeTool(call);
    expect(match?.status).toBe("unresolved");
    expect(cursor.unmatchedTools()).toEqual([]);
    cursor.giveBack(match as NonNullable<typeof match>);
    cursor.giveBack(match as NonNullable<typeof match>);
    expect(cursor.unmatchedTools({ toolCallId: "c1" })).toEqual([match?.attempt]);
    const again = cursor.takeTool(call);
    expect(again?.attempt).toBe(match?.attempt);
    expect(cursor.remaining).toBe(3);
  });
});
