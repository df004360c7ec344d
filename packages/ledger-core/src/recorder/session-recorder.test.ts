import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { verifyRun } from "../inspect/verify-run.js";
import type { AppendRequest, EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import type { Attempt } from "./attempt.js";
import { SessionRecorder } from "./session-recorder.js";

const actor: Actor = { type: "agent", id: "planner", framework: "test" };
const request = { model: "fake-1", messages: [{ role: "user", content: "add 1 and 2" }] };

function recorder(store: EventStore, runId = "run-1") {
  return new SessionRecorder({ store, sessionId: "session-1", runId, actor });
}

/** A new process's recorder on run-1, resumed from what the store holds. */
function resume(store: EventStore, as: Actor = actor) {
  return SessionRecorder.resume({ store, sessionId: "session-1", runId: "run-1", actor: as });
}

/** run-1 with a child run ("helper") that made one model call, answered "from child". */
async function recordRunWithChild(store: EventStore) {
  const parent = recorder(store);
  await parent.startRun();
  const child = parent.child({ actor: { type: "agent", id: "helper" } });
  await child.startRun();
  await child.modelCompleted(await child.beforeModelCall({ request }), { text: "from child" });
  return child;
}

/** A store whose appends can be counted and made to fail. */
class FlakyStore extends MemoryEventStore {
  appends: AppendRequest[] = [];
  failNext: Error | undefined;
  override async append(request: AppendRequest) {
    this.appends.push(request);
    const error = this.failNext;
    if (error) {
      this.failNext = undefined;
      throw error;
    }
    return super.append(request);
  }
}

describe("SessionRecorder", () => {
  it("records a run: requested before the call, completed after, all chained", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun({ task: "add" });
    const model = await rec.beforeModelCall({ request });
    expect((await store.runHead({ sessionId: "session-1", runId: "run-1" })).length).toBe(2);
    const completion = await rec.modelCompleted(model, {
      toolCalls: [{ id: "call-1", name: "add" }],
    });
    const tool = await rec.beforeToolCall({
      toolCallId: "call-1",
      name: "add",
      args: { a: 1, b: 2 },
      effect: { kind: "none", idempotent: true },
    });
    await rec.toolCompleted(tool, 3);
    await rec.completeRun({ answer: 3 });
    const events = await readWholeRun(store, { sessionId: "session-1", runId: "run-1" });
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "model.requested",
      "model.completed",
      "tool.requested",
      "tool.completed",
      "run.completed",
    ]);
    expect(events[3]?.causedByEventId).toBe(completion.eventId);
    expect(events[3]?.payload).toMatchObject({
      toolCallId: "call-1",
      name: "add",
      args: { a: 1, b: 2 },
      effect: { kind: "none", idempotent: true },
    });
    expect(events[2]?.attemptId).toBe(model.attemptId);
    expect(events.every((event) => event.actor?.id === "planner")).toBe(true);
    expect(await verifyRun(store, { sessionId: "session-1", runId: "run-1" })).toEqual({
      ok: true,
      length: 6,
    });
    await expect(rec.beforeModelCall({ request })).rejects.toMatchObject({ code: "run-closed" });
  });

  it("commits concurrent tool calls together in one append (group commit)", async () => {
    const store = new FlakyStore();
    const rec = recorder(store);
    await rec.startRun();
    store.appends = [];
    const attempts = await Promise.all(
      Array.from({ length: 8 }, (_, index) =>
        rec.beforeToolCall({ toolCallId: `call-${index}`, name: "lookup", args: { index } }),
      ),
    );
    expect(store.appends).toHaveLength(1);
    expect(store.appends[0]?.events).toHaveLength(8);
    expect(attempts.map((attempt) => attempt.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    await Promise.all(attempts.map((attempt, index) => rec.toolCompleted(attempt, index)));
    expect((await inspectSession(store, "session-1")).unresolved).toEqual([]);
  });

  it("fails closed: a rejected append rejects before*, and the next call re-syncs", async () => {
    const store = new FlakyStore();
    const rec = recorder(store);
    await rec.startRun();
    store.failNext = new LedgerError("run-closed", "simulated refusal");
    await expect(rec.beforeModelCall({ request })).rejects.toMatchObject({ code: "run-closed" });
    const attempt = await rec.beforeModelCall({ request });
    expect(attempt.seq).toBe(1);
  });

  it("retries an append with an unknown outcome using the same event ids", async () => {
    const store = new FlakyStore();
    const rec = recorder(store);
    await rec.startRun();
    store.failNext = new LedgerError("store-unavailable", "connection reset");
    const attempt = await rec.beforeModelCall({ request });
    expect(store.appends.at(-1)?.events[0]?.eventId).toBeTypeOf("string");
    expect(store.appends.at(-1)?.events[0]?.eventId).toBe(store.appends.at(-2)?.events[0]?.eventId);
    expect(attempt.seq).toBe(1);
  });

  it("rejects a non-JSON request with the path of the bad value and writes nothing", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun();
    const bad = {
      messages: [
        { role: "user" },
        { role: "user" },
        { role: "user" },
        { role: "user", content: () => "x" },
      ],
    };
    await expect(rec.beforeModelCall({ request: bad })).rejects.toMatchObject({
      code: "non-serializable",
      path: "$.messages[3].content",
    });
    expect((await store.runHead({ sessionId: "session-1", runId: "run-1" })).length).toBe(1);
  });

  it("rejects recorder metadata that is not a JSON object, even on a resumed run", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun();
    // A resumed recorder writes no run.started of its own: its first event is a prevalidated
    // request, so the store never sees the recorder's metadata before it is stored.
    await expect(
      SessionRecorder.resume({
        store,
        sessionId: "session-1",
        runId: "run-1",
        actor: { type: "agent", id: "a" },
        metadata: ["not", "an", "object"] as never,
      }),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.metadata" });
    expect(
      () =>
        new SessionRecorder({ store, sessionId: "session-1", actor, metadata: "text" as never }),
    ).toThrow(expect.objectContaining({ code: "invalid-event", path: "$.metadata" }));
    expect((await store.runHead({ sessionId: "session-1", runId: "run-1" })).length).toBe(1);
  });

  // The recorder's requests reach the store prevalidated (it does not walk their payload
  // again), so every value a caller hands in is checked here, with the caller's path.
  it("rejects bad call metadata, effects, names and causes before anything is written", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun();
    const cases: [Promise<unknown>, string, string][] = [
      [
        rec.beforeModelCall({ request, metadata: { trace: { at: new Date() } } as never }),
        "non-serializable",
        "$.metadata.trace.at",
      ],
      [
        rec.beforeModelCall({ request, metadata: ["not", "an", "object"] as never }),
        "invalid-event",
        "$.metadata",
      ],
      [
        rec.beforeToolCall({
          name: "lookup",
          args: {},
          effect: { kind: "read", idempotent: true, note: () => 1 } as never,
        }),
        "non-serializable",
        "$.effect.note",
      ],
      [
        rec.beforeToolCall({ name: "lookup", args: {}, effect: { kind: "maybe" } as never }),
        "invalid-event",
        "$.effect.kind",
      ],
      [
        rec.beforeToolCall({ name: "lookup", args: {}, effect: { idempotent: "yes" } as never }),
        "invalid-event",
        "$.effect.idempotent",
      ],
      [rec.beforeToolCall({ name: "look\uD800up", args: {} }), "non-serializable", "$.name"],
      [
        rec.beforeToolCall({ name: "lookup", args: {}, causedByEventId: "" }),
        "invalid-event",
        "$.causedByEventId",
      ],
      [rec.beforeModelCall({ request, causedByEventId: "" }), "invalid-event", "$.causedByEventId"],
    ];
    for (const [call, code, path] of cases)
      await expect(call).rejects.toMatchObject({ code, path });
    expect((await store.runHead({ sessionId: "session-1", runId: "run-1" })).length).toBe(1);
    // Completions too: their metadata, and the tool call id of an attempt handed back.
    const model = await rec.beforeModelCall({ request });
    await expect(
      (async () =>
        rec.modelCompleted(model, { text: "hi" }, { metadata: { at: Symbol("x") } as never }))(),
    ).rejects.toMatchObject({ code: "non-serializable", path: "$.metadata.at" });
    const tool = await rec.beforeToolCall({ toolCallId: "t-1", name: "lookup", args: {} });
    await expect(
      (async () => rec.toolCompleted({ ...tool, toolCallId: 42 as never }, "done"))(),
    ).rejects.toMatchObject({ code: "invalid-event", path: "$.toolCallId" });
    expect((await store.runHead({ sessionId: "session-1", runId: "run-1" })).length).toBe(3);
    await rec.modelCompleted(model, { text: "hi" });
    await rec.toolCompleted(tool, "done");
    // What passes is stored exactly as given, and the chain verifies.
    const ok = await rec.beforeToolCall({
      name: "lookup",
      args: { q: "x" },
      effect: { kind: "read" },
      metadata: { trace: "t-1" },
    });
    const stored = (await readWholeRun(store, { sessionId: "session-1", runId: "run-1" }))[5];
    expect(stored).toMatchObject({
      eventId: ok.requestedEventId,
      metadata: { trace: "t-1" },
      payload: { name: "lookup", effect: { kind: "read", idempotent: false } },
    });
    expect(await verifyRun(store, { sessionId: "session-1", runId: "run-1" })).toMatchObject({
      ok: true,
    });
  });

  it("records retries as new attempts of the same step, and abandonment", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun();
    const first = await rec.beforeModelCall({ request });
    await rec.modelFailed(first, Object.assign(new Error("rate limited"), { code: "429" }));
    await expect(rec.retry(first, { metadata: { bad: Number.NaN } })).rejects.toMatchObject({
      code: "non-serializable",
      path: "$.metadata.bad",
    });
    const second = await rec.retry(first, { metadata: { stream: true } });
    expect(second).toMatchObject({ stepId: first.stepId, retryOf: first.attemptId });
    expect(second.attemptId).not.toBe(first.attemptId);
    const retried = (await readWholeRun(store, { sessionId: "session-1", runId: "run-1" })).at(-1);
    expect(retried).toMatchObject({ retryOf: first.attemptId, metadata: { stream: true } });
    await rec.modelCompleted(second, { text: "ok" });
    const tool = await rec.beforeToolCall({ toolCallId: "c1", name: "pay", args: { amount: 5 } });
    await rec.abandon(tool, "operator checked: payment never reached the bank");
    const inspection = await inspectSession(store, "session-1");
    const steps = inspection.runs[0]?.steps ?? [];
    expect(steps[0]?.attempts.map((attempt) => attempt.status)).toEqual(["failed", "completed"]);
    expect(steps[1]?.attempts[0]?.status).toBe("abandoned");
    expect(inspection.unresolved).toEqual([]);
  });

  it("a model call a tool makes is caused by the tool's request; its retry keeps the cause", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun();
    const turn = await rec.beforeModelCall({ request });
    expect(turn.causedByEventId).toBeUndefined();
    await rec.modelCompleted(turn, { toolCalls: [{ id: "c1" }] });
    const summarize = await rec.beforeToolCall({ toolCallId: "c1", name: "summarize", args: {} });
    const inner = await rec.beforeModelCall({
      request: { ...request, messages: [{ role: "user", content: "summarize this" }] },
      causedByEventId: summarize.requestedEventId,
    });
    expect(inner.causedByEventId).toBe(summarize.requestedEventId);
    await rec.modelFailed(inner, new Error("overloaded"));
    const again = await rec.retry(inner);
    const events = await readWholeRun(store, { sessionId: "session-1", runId: "run-1" });
    const requested = events.filter((event) => event.type === "model.requested");
    expect(requested.map((event) => event.causedByEventId)).toEqual([
      undefined,
      summarize.requestedEventId,
      summarize.requestedEventId,
    ]);
    expect(again.causedByEventId).toBe(summarize.requestedEventId);
  });

  it("a retried tool call keeps its cause; a tampered attempt is refused, nothing written", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun();
    const model = await rec.beforeModelCall({ request });
    const completion = await rec.modelCompleted(model, { toolCalls: [{ id: "c1" }] });
    const tool = await rec.beforeToolCall({ toolCallId: "c1", name: "pay", args: { amount: 5 } });
    expect(tool.causedByEventId).toBe(completion.eventId);
    await rec.toolFailed(tool, new Error("timeout"));
    const again = await rec.retry(tool);
    const events = await readWholeRun(store, { sessionId: "session-1", runId: "run-1" });
    expect(events.at(-1)).toMatchObject({
      type: "tool.requested",
      retryOf: tool.attemptId,
      causedByEventId: completion.eventId,
    });
    expect(again.causedByEventId).toBe(completion.eventId);
    const tampered: [object, string, string][] = [
      [{ request: { amount: () => 5 } }, "non-serializable", "$.request.amount"],
      [{ effect: { kind: "sometimes", idempotent: true } }, "invalid-event", "$.effect.kind"],
      [{ requestHash: 42 }, "invalid-argument", "$.requestHash"],
      [{ attemptId: "" }, "invalid-event", "$.attemptId"],
      [{ kind: "other" }, "invalid-argument", "$.kind"],
    ];
    for (const [change, code, path] of tampered)
      await expect(rec.retry({ ...again, ...change } as never)).rejects.toMatchObject({
        code,
        path,
      });
    expect(await readWholeRun(store, { sessionId: "session-1", runId: "run-1" })).toHaveLength(
      events.length,
    );
  });

  it("child runs carry parentRunId and show as a tree", async () => {
    const store = new MemoryEventStore();
    const rec = recorder(store);
    await rec.startRun();
    const model = await rec.beforeModelCall({ request });
    const done = await rec.modelCompleted(model, { handoff: "researcher" });
    const child = rec.child({
      actor: { type: "agent", id: "researcher" },
      causedByEventId: done.eventId,
    });
    const started = await child.startRun({ task: "research" });
    expect(started).toMatchObject({
      parentRunId: "run-1",
      causedByEventId: done.eventId,
      runId: child.runId,
    });
    await child.completeRun("found");
    const inspection = await inspectSession(store, "session-1");
    expect(inspection.runs).toHaveLength(1);
    expect(inspection.runs[0]?.children.map((run) => [run.runId, run.status])).toEqual([
      [child.runId, "completed"],
    ]);
  });

  it("resume answers recorded calls from the ledger and continues live at the frontier", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun({ task: "add" });
    await first.recordInput("add 1 and 2");
    const model = await first.beforeModelCall({ request });
    await first.modelCompleted(model, { toolCalls: [{ id: "call-1" }, { id: "call-2" }] });
    const done = await first.beforeToolCall({ toolCallId: "call-1", name: "add", args: { a: 1 } });
    await first.toolCompleted(done, 1);
    const inFlight = await first.beforeToolCall({
      toolCallId: "call-2",
      name: "add",
      args: { a: 2 },
      effect: { kind: "read", idempotent: true },
    });
    // The process dies here: call-2 went out and never came back.
    expect(
      (await inspectSession(store, "session-1")).unresolved.map((attempt) => attempt.toolCallId),
    ).toEqual(["call-2"]);

    const second = await resume(store);
    expect(second.resumed).toBe(true);
    await second.startRun({ task: "add" });
    await second.recordInput("add 1 and 2");
    const replayedModel = await second.beforeModelCall({ request });
    expect(replayedModel.replayed).toMatchObject({
      status: "completed",
      result: { toolCalls: [{ id: "call-1" }, { id: "call-2" }] },
    });
    const replayedTool = await second.beforeToolCall({
      toolCallId: "call-1",
      name: "add",
      args: { a: 1 },
    });
    expect(replayedTool.replayed).toMatchObject({ status: "completed", result: 1 });
    const retried = await second.beforeToolCall({
      toolCallId: "call-2",
      name: "add",
      args: { a: 2 },
      effect: { kind: "read", idempotent: true },
    });
    expect(retried.replayed).toBeUndefined();
    expect(retried.retryOf).toBe(inFlight.attemptId);
    await second.toolCompleted(retried, 2);
    const live = await second.beforeModelCall({ request: { ...request, step: 2 } });
    expect(live.replayed).toBeUndefined();
    await second.modelCompleted(live, { text: "3" });
    await second.completeRun({ answer: 3 });
    const inspection = await inspectSession(store, "session-1");
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.status).toBe("completed");
    // The old process, if still alive, loses on conflict.
    await expect(first.toolCompleted(inFlight, 2)).rejects.toMatchObject({ code: "run-closed" });
  });

  it("resume refuses to re-run a non-idempotent tool that was in flight, until retried or abandoned", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun();
    const model = await first.beforeModelCall({ request });
    await first.modelCompleted(model, { toolCalls: [{ id: "pay-1" }] });
    await first.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
      effect: { kind: "write", idempotent: false },
    });

    const second = await resume(store);
    await second.beforeModelCall({ request });
    const error = await second
      .beforeToolCall({ toolCallId: "pay-1", name: "pay", args: { amount: 5 } })
      .catch((caught: unknown) => caught);
    expect(LedgerError.isInstance(error, "unresolved-attempt")).toBe(true);
    const unresolved = (error as { attempt: Parameters<SessionRecorder["abandon"]>[0] }).attempt;
    await second.abandon(unresolved, "the bank says no payment was made; the model will be told");

    const third = await resume(store);
    await third.beforeModelCall({ request });
    const replayed = await third.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
    });
    expect(replayed.replayed).toMatchObject({
      status: "abandoned",
      reason: "the bank says no payment was made; the model will be told",
    });
  });

  it("resume reports a different request as replay-divergence", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun();
    await first.modelCompleted(await first.beforeModelCall({ request }), { text: "hi" });
    const second = await resume(store);
    await expect(
      second.beforeModelCall({ request: { ...request, messages: [] } }),
    ).rejects.toMatchObject({ code: "replay-divergence" });
    await expect(
      SessionRecorder.resume({ store, sessionId: "session-1", runId: "nope", actor }),
    ).rejects.toMatchObject({ code: "not-found" });
  });

  it("a child of a resumed run adopts the recorded child run and replays it", async () => {
    const store = new MemoryEventStore();
    const child = await recordRunWithChild(store);

    const resumed = await resume(store);
    const again = resumed.child({ actor: { type: "agent", id: "helper" } });
    await again.startRun();
    expect(again.runId).toBe(child.runId);
    expect((await again.beforeModelCall({ request })).replayed).toMatchObject({
      result: { text: "from child" },
    });
    expect((await store.listRuns("session-1")).length).toBe(2);
  });

  it("a child started by a call adopts the child that call started, never another call's", async () => {
    // Two tool calls each ran the agent "helper" on a child run; the first completed, the
    // process died during the second.
    const store = new MemoryEventStore();
    const helper: Actor = { type: "agent", id: "helper" };
    const parent = recorder(store);
    await parent.startRun();
    const children: SessionRecorder[] = [];
    const calls = [];
    for (const toolCallId of ["c1", "c2"]) {
      const call = await parent.beforeToolCall({ toolCallId, name: "helper", args: {} });
      const child = parent.child({ actor: helper, causedByEventId: call.requestedEventId });
      await child.startRun();
      children.push(child);
      calls.push(call);
    }
    const [first, second] = children;
    await first?.completeRun("done");

    const resumed = await resume(store);
    // The second call, met again, goes on on its own child run, not on the first call's.
    const [call1, call2] = calls;
    expect(resumed.child({ actor: helper, causedByEventId: call2?.requestedEventId }).runId).toBe(
      second?.runId,
    );
    expect(resumed.child({ actor: helper, causedByEventId: call1?.requestedEventId }).runId).toBe(
      first?.runId,
    );
    // A call the ledger does not hold is new: a new run, never the completed child of another.
    const later = await resumed.beforeToolCall({ toolCallId: "c3", name: "helper", args: {} });
    const fresh = resumed.child({ actor: helper, causedByEventId: later.requestedEventId });
    await fresh.startRun();
    expect([first?.runId, second?.runId]).not.toContain(fresh.runId);
    expect(fresh.parentRunId).toBe("run-1");
    // Nor does a child without a cause take a child recorded for a call.
    expect([first?.runId, second?.runId]).not.toContain(resumed.child({ actor: helper }).runId);
  });

  it("a retry of the call that started a child adopts that child, in this process or the next", async () => {
    // The process died during a tool call whose agent ran on a child run.
    const store = new MemoryEventStore();
    const helper: Actor = { type: "agent", id: "helper" };
    const parent = recorder(store);
    await parent.startRun();
    const call = await parent.beforeToolCall({ toolCallId: "c1", name: "helper", args: {} });
    const child = parent.child({ actor: helper, causedByEventId: call.requestedEventId });
    await child.startRun();

    // A person approved running it again: the retry's request is the cause the adapter names.
    const resumed = await resume(store);
    const unresolved = await resumed
      .beforeToolCall({ toolCallId: "c1", name: "helper", args: {} })
      .catch((error: { attempt?: Attempt }) => error.attempt);
    if (!unresolved) throw new Error("expected the call to be unresolved");
    const retried = await resumed.retry(unresolved);
    expect(retried.requestedEventId).not.toBe(call.requestedEventId);
    expect(resumed.child({ actor: helper, causedByEventId: retried.requestedEventId }).runId).toBe(
      child.runId,
    );

    // The process died again: the next one adopts it through the recorded retry too.
    const third = await resume(store);
    expect(third.child({ actor: helper, causedByEventId: retried.requestedEventId }).runId).toBe(
      child.runId,
    );
  });

  it("a child whose recorded run could not be read tries again at its next call", async () => {
    const store = new MemoryEventStore();
    const child = await recordRunWithChild(store);

    const resumed = await resume(store);
    const again = resumed.child({ actor: { type: "agent", id: "helper" } });
    // The store is unreachable for the child's first read, then back.
    const readRun = store.readRun.bind(store);
    let down = true;
    store.readRun = (request) =>
      down
        ? Promise.reject(new LedgerError("store-unavailable", "connection reset"))
        : readRun(request);
    await expect(again.startRun()).rejects.toMatchObject({ code: "store-unavailable" });
    down = false;
    await again.startRun();
    expect(again.runId).toBe(child.runId);
    expect((await again.beforeModelCall({ request })).replayed).toMatchObject({
      result: { text: "from child" },
    });
  });

  it("redacts configured paths before hashing and persisting", async () => {
    const store = new MemoryEventStore();
    const rec = new SessionRecorder({
      store,
      sessionId: "session-1",
      actor,
      redact: ["**.apiKey", "request.headers.authorization"],
    });
    await rec.startRun();
    await rec.beforeModelCall({
      request: {
        model: "m",
        apiKey: "sk-secret",
        settings: { apiKey: "sk-2" },
        headers: { authorization: "Bearer x" },
      },
    });
    const json = JSON.stringify((await store.readSession({ sessionId: "session-1" })).events);
    expect(json).not.toContain("sk-secret");
    expect(json).not.toContain("sk-2");
    expect(json).not.toContain("Bearer x");
    expect(json).toContain("[redacted]");
  });
});

describe("approval from another process", () => {
  it("an approved unresolved tool call runs again on the next resume, once", async () => {
    const store = new MemoryEventStore();
    const first = recorder(store);
    await first.startRun();
    await first.modelCompleted(await first.beforeModelCall({ request }), {
      toolCalls: [{ id: "pay-1" }],
    });
    const inFlight = await first.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
    });

    // A person looks at the ledger from another process and approves a re-run.
    const operator = await resume(store, { type: "human", id: "ops" });
    await operator.approve(inFlight, "bank confirms no payment was made");
    const view = await inspectSession(store, "session-1");
    expect(view.unresolved.map((attempt) => attempt.approvedAt !== undefined)).toEqual([true]);
    // Who decided and why, for the person who reads the inspection before the next resume.
    expect(view.unresolved[0]).toMatchObject({
      approvedBy: "ops",
      approvalReason: "bank confirms no payment was made",
    });

    const resumed = await resume(store);
    await resumed.beforeModelCall({ request });
    const rerun = await resumed.beforeToolCall({
      toolCallId: "pay-1",
      name: "pay",
      args: { amount: 5 },
    });
    expect(rerun.replayed).toBeUndefined();
    expect(rerun.retryOf).toBe(inFlight.attemptId);
    // If this re-run dies too, the next resume asks again: the approval covered one attempt.
    const again = await resume(store);
    await again.beforeModelCall({ request });
    await expect(
      again.beforeToolCall({ toolCallId: "pay-1", name: "pay", args: { amount: 5 } }),
    ).rejects.toMatchObject({ code: "unresolved-attempt" });
  });
});
