import { describe, expect, it, vi } from "vitest";
import { hashJson } from "../events/canonical.js";
import { ReplayDivergenceError } from "../events/errors.js";
import type { Attempt } from "../recorder/attempt.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import {
  attemptFromRecorded,
  collectAttempts,
  ReplayCursor,
  type ReplayMatch,
} from "./replay-cursor.js";

const actor = { type: "agent", id: "a" } as const;
const request = (turn: number) => ({ model: "m", turn });

async function recordedRun() {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  for (let turn = 0; turn < 3; turn++) {
    await recorder.modelCompleted(await recorder.beforeModelCall({ request: request(turn) }), {
      turn,
    });
  }
  const tool = await recorder.beforeToolCall({
    toolCallId: "c1",
    name: "pay",
    args: { amount: 1 },
  });
  return { store, tool, events: await readWholeRun(store, { sessionId: "s", runId: "r" }) };
}

/** A run of `count` completed tool calls c0, c1..., named "even" and "odd" in turn. */
async function longToolRun(count: number) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  for (let index = 0; index < count; index++) {
    const attempt = await recorder.beforeToolCall({
      toolCallId: `c${index}`,
      name: index % 2 === 0 ? "even" : "odd",
      args: { index },
    });
    await recorder.toolCompleted(attempt, { index });
  }
  return readWholeRun(store, { sessionId: "s", runId: "r" });
}

describe("ReplayCursor", () => {
  it("matches the tool calls of a long run in linear time: each recorded attempt is looked at a bounded number of times", async () => {
    // takeTool scanned every tool attempt of the run, used ones included, for each call: a
    // resume of 25,000 recorded tool calls spent 6 s matching them.
    const count = 2000;
    const events = await longToolRun(count);
    const recorded = collectAttempts(events);
    for (const byName of [false, true]) {
      const cursor = new ReplayCursor(events);
      const lookups = vi.spyOn(Set.prototype, "has");
      try {
        for (const attempt of recorded) {
          const call = { name: attempt.name as string, requestHash: attempt.requestHash };
          const match = cursor.takeTool(
            byName ? call : { ...call, toolCallId: attempt.toolCallId as string },
          );
          expect(match?.attempt.attemptId).toBe(attempt.attemptId);
        }
        expect(lookups.mock.calls.length).toBeLessThan(4 * count);
      } finally {
        lookups.mockRestore();
      }
      expect(cursor.atFrontier).toBe(true);
    }
  });

  it("skipModelsTo moves past calls a checkpoint covers, or goes live", async () => {
    const { events } = await recordedRun();
    const cursor = new ReplayCursor(events);
    expect(cursor.skipModelsTo(hashJson(request(2)))).toBe(true);
    expect(cursor.takeModel(hashJson(request(2)))?.status).toBe("completed");
    expect(cursor.takeModel(hashJson(request(3)))).toBeUndefined();
    const other = new ReplayCursor(events);
    expect(other.skipModelsTo(hashJson(request(9)))).toBe(false);
    expect(other.takeModel(hashJson(request(0)))).toBeUndefined();
  });

  it("skipModelsTo with accepts moves past only the attempts it accepts", async () => {
    // Two conversations on one run: turns 0 and 2 are one's, turn 1 the other's.
    const { events } = await recordedRun();
    const ours = (attempt: { requested: { payload: unknown } }) =>
      (attempt.requested.payload as { request: { turn: number } }).request.turn !== 1;
    const cursor = new ReplayCursor(events);
    // Ours asks something recorded by neither: it goes live, the other's turn stays.
    expect(cursor.skipModelsTo(hashJson(request(9)), ours)).toBe(false);
    expect(cursor.remaining).toBe(2);
    expect(cursor.takeModel(hashJson(request(1)))?.status).toBe("completed");
    // Ours asks its second turn, recorded after the other's: only its first is moved past.
    const other = new ReplayCursor(events);
    expect(other.skipModelsTo(hashJson(request(2)), ours)).toBe(true);
    expect(other.takeModel(hashJson(request(2)), undefined, ours)?.status).toBe("completed");
    expect(other.takeModel(hashJson(request(1)))?.status).toBe("completed");
    // Not ours: a request only the other conversation recorded is not found.
    expect(new ReplayCursor(events).skipModelsTo(hashJson(request(1)), ours)).toBe(false);
  });

  it("skipAll leaves nothing to answer: what follows is live", async () => {
    const { events } = await recordedRun();
    const cursor = new ReplayCursor(events);
    expect(cursor.remaining).toBe(4);
    cursor.skipAll();
    expect(cursor.atFrontier).toBe(true);
    expect(cursor.takeTool({ toolCallId: "c1", name: "pay", requestHash: "x" })).toBeUndefined();
    expect(cursor.takeInput()).toBeUndefined();
  });

  it("skipTools moves past the tool attempts a checkpoint covers, and only those", async () => {
    const { events, tool } = await recordedRun();
    const cursor = new ReplayCursor(events);
    const call = { toolCallId: "c1", name: "pay", requestHash: tool.requestHash };
    expect(cursor.skipTools((attempt) => attempt.name === "other")).toBe(0);
    expect(cursor.takeTool(call)?.attempt.attemptId).toBe(tool.attemptId);
    const other = new ReplayCursor(events);
    expect(other.skipTools((attempt) => attempt.toolCallId === "c1")).toBe(1);
    expect(other.skipTools(() => true)).toBe(0);
    expect(other.takeTool(call)).toBeUndefined();
    expect(other.atFrontier).toBe(false);
  });

  it("unmatchedTools lists the recorded tool attempts no call has matched or skipped yet, in request order", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const call = (toolCallId: string, name: string) =>
      recorder.beforeToolCall({ toolCallId, name, args: { toolCallId } });
    const failed = await call("c0", "pay");
    await recorder.toolFailed(failed, new Error("refused"));
    // Retried while in flight: the cursor answers that call with its retry alone.
    const lost = await call("c1", "pay");
    const retry = await recorder.retry(lost);
    const second = await call("c2", "pay");
    const third = await call("c3", "note");
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
    const ids = (cursor: ReplayCursor) => cursor.unmatchedTools().map((tool) => tool.attemptId);

    const cursor = new ReplayCursor(events);
    expect(ids(cursor)).toEqual([
      failed.attemptId,
      retry.attemptId,
      second.attemptId,
      third.attemptId,
    ]);
    cursor.takeTool({ toolCallId: "c2", name: "pay", requestHash: second.requestHash });
    expect(cursor.skipTools((tool) => tool.attemptId === failed.attemptId)).toBe(1);
    expect(ids(cursor)).toEqual([retry.attemptId, third.attemptId]);
    // A read: asking again moves nothing, and what it listed is still there to match.
    expect(ids(cursor)).toEqual([retry.attemptId, third.attemptId]);
    expect(cursor.remaining).toBe(2);
    expect(
      cursor.takeTool({ toolCallId: "c3", name: "note", requestHash: third.requestHash })?.attempt
        .attemptId,
    ).toBe(third.attemptId);
    expect(ids(cursor)).toEqual([retry.attemptId]);
    cursor.skipAll();
    expect(cursor.unmatchedTools()).toEqual([]);
  });

  it("unmatchedTools and skipTools given a toolCallId or a name look only at the attempts under it", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const call = async (name: string, toolCallId?: string) => {
      const options = { name, args: { at: recorder.length } };
      const attempt = await recorder.beforeToolCall(
        toolCallId === undefined ? options : { ...options, toolCallId },
      );
      await recorder.toolCompleted(attempt, "done");
      return attempt.attemptId;
    };
    // A model that gives the same id every turn asks for c1 twice; one call comes without an id.
    const first = await call("pay", "c1");
    const note = await call("note", "c2");
    const again = await call("pay", "c1");
    const idless = await call("pay");
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
    const cursor = new ReplayCursor(events);
    const ids = (attempts: readonly { attemptId: string }[]) =>
      attempts.map((attempt) => attempt.attemptId);

    expect(ids(cursor.unmatchedTools({ toolCallId: "c1" }))).toEqual([first, again]);
    expect(ids(cursor.unmatchedTools({ name: "pay" }))).toEqual([first, again, idless]);
    expect(cursor.unmatchedTools({ toolCallId: "c9" })).toEqual([]);
    expect(cursor.unmatchedTools({ name: "refund" })).toEqual([]);
    const [recordedFirst] = cursor.unmatchedTools({ toolCallId: "c1" });
    cursor.takeTool({
      toolCallId: "c1",
      name: "pay",
      requestHash: recordedFirst?.requestHash ?? "",
    });
    expect(ids(cursor.unmatchedTools({ toolCallId: "c1" }))).toEqual([again]);
    expect(ids(cursor.unmatchedTools({ name: "pay" }))).toEqual([again, idless]);

    // skipTools is shown only the unmatched attempts of that name, never "note" nor the matched.
    const shown: string[] = [];
    const skipped = cursor.skipTools(
      (attempt) => {
        shown.push(attempt.attemptId);
        return attempt.toolCallId === undefined;
      },
      { name: "pay" },
    );
    expect(skipped).toBe(1);
    expect(shown).toEqual([again, idless]);
    expect(ids(cursor.unmatchedTools())).toEqual([note, again]);
    expect(cursor.skipTools(() => true, { toolCallId: "c2" })).toBe(1);
    expect(ids(cursor.unmatchedTools())).toEqual([again]);
    expect(cursor.remaining).toBe(1);
  });

  it("unmatchedTools given a toolCallId or a name costs the attempts under it, not the run", async () => {
    // An adapter asks this for every tool call: by a scan of the run, a resumed run of 5,000
    // recorded tool calls spent its time quadratic in them, on replay and for as long as it
    // went on.
    const count = 2000;
    const events = await longToolRun(count);
    const cursor = new ReplayCursor(events);
    const lookups = vi.spyOn(Set.prototype, "has");
    try {
      for (const attempt of collectAttempts(events)) {
        const name = attempt.name as string;
        const toolCallId = attempt.toolCallId as string;
        expect(cursor.unmatchedTools({ toolCallId })).toEqual([attempt]);
        cursor.takeTool({ toolCallId, name, requestHash: attempt.requestHash });
      }
      // Past the frontier, as a resumed run goes on.
      for (let index = 0; index < count; index++) {
        expect(cursor.unmatchedTools({ name: index % 2 === 0 ? "even" : "odd" })).toEqual([]);
        expect(cursor.unmatchedTools({ toolCallId: `c${index}` })).toEqual([]);
      }
      expect(lookups.mock.calls.length).toBeLessThan(8 * count);
    } finally {
      lookups.mockRestore();
    }
  });

  it("matchModelsByRequest answers model calls made in another order, each with its own request's answer", async () => {
    const { events } = await recordedRun();
    const turnOf = (match: ReplayMatch | undefined) =>
      (match?.attempt.requested.payload as { request?: { turn: number } } | undefined)?.request
        ?.turn;
    // In order, the third call made first is another run.
    expect(() => new ReplayCursor(events).takeModel(hashJson(request(2)))).toThrow(
      ReplayDivergenceError,
    );
    const cursor = new ReplayCursor(events);
    cursor.matchModelsByRequest();
    expect(turnOf(cursor.takeModel(hashJson(request(2))))).toBe(2);
    expect(cursor.remaining).toBe(3);
    expect(turnOf(cursor.takeModel(hashJson(request(0))))).toBe(0);
    // A request none of the recorded calls left has: made live (cut off by the crash).
    expect(cursor.takeModel(hashJson(request(9)))).toBeUndefined();
    expect(turnOf(cursor.takeModel(hashJson(request(1))))).toBe(1);
    // Each recorded call answers once.
    expect(cursor.takeModel(hashJson(request(2)))).toBeUndefined();
    expect(cursor.remaining).toBe(1);
  });

  it("matchModelsByRequest finds a model call's recorded retry by the attempt it retries", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const [first, second] = await Promise.all([
      recorder.beforeModelCall({ request: request(0) }),
      recorder.beforeModelCall({ request: request(1) }),
    ]);
    await recorder.modelFailed(first as Attempt, new Error("overloaded"));
    await recorder.modelCompleted(second as Attempt, { turn: 1 });
    const retry = await recorder.retry(first as Attempt);
    await recorder.modelCompleted(retry, { turn: 0 });
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });
    const call = { kind: "model" as const, retryOf: first?.attemptId as string };

    const cursor = new ReplayCursor(events);
    cursor.matchModelsByRequest();
    expect(cursor.takeModel(hashJson(request(1)))?.attempt.attemptId).toBe(second?.attemptId);
    expect(cursor.takeModel(hashJson(request(0)))?.status).toBe("failed");
    const retried = cursor.takeRetry({ ...call, requestHash: hashJson(request(0)) });
    expect(retried?.attempt.attemptId).toBe(retry.attemptId);
    expect(cursor.atFrontier).toBe(true);
    // In order, the retry is answered only when it is the next recorded call.
    const ordered = new ReplayCursor(events);
    expect(ordered.takeModel(hashJson(request(0)))?.status).toBe("failed");
    expect(ordered.takeRetry({ ...call, requestHash: hashJson(request(0)) })).toBeUndefined();
  });

  it("finds the retry of a completed model call where a resume made it, out of order", async () => {
    // A call answered without what the caller needs (an embedding recorded without its
    // vectors) is made again on resume as a retry, committed after the calls recorded before.
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
    await recorder.startRun();
    const first = await recorder.beforeModelCall({ request: request(0) });
    await recorder.modelCompleted(first, { count: 1 });
    const second = await recorder.beforeModelCall({ request: request(1) });
    await recorder.modelCompleted(second, { turn: 1 });
    const retry = await recorder.retry(first);
    await recorder.modelCompleted(retry, { count: 1 });
    const events = await readWholeRun(store, { sessionId: "s", runId: "r" });

    const cursor = new ReplayCursor(events);
    expect(cursor.takeModel(hashJson(request(0)))?.attempt.attemptId).toBe(first.attemptId);
    const call = { kind: "model" as const, retryOf: first.attemptId };
    const retried = cursor.takeRetry({ ...call, requestHash: hashJson(request(0)) });
    expect(retried?.attempt.attemptId).toBe(retry.attemptId);
    // Taken ahead: the next call is the one recorded after the first, then the run's end.
    expect(cursor.takeModel(hashJson(request(1)))?.attempt.attemptId).toBe(second.attemptId);
    expect(cursor.atFrontier).toBe(true);
  });

  it("attemptFromRecorded rebuilds the attempt before* returned", async () => {
    const { tool, events } = await recordedRun();
    const recorded = collectAttempts(events).find(
      (attempt) => attempt.attemptId === tool.attemptId,
    );
    expect(recorded && attemptFromRecorded(recorded)).toEqual(tool);
  });
});
