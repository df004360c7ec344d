import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { verifyRun } from "../inspect/verify-run.js";
import type { AppendRequest } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SessionRecorder } from "./session-recorder.js";
import { actor, recorder, request } from "./session-recorder.test.data.js";

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
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.metadata" });
    expect(
      () =>
        new SessionRecorder({ store, sessionId: "session-1", actor, metadata: "text" as never }),
    ).toThrow(expect.objectContaining({ code: "invalid-argument", path: "$.metadata" }));
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
        "invalid-argument",
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
        "invalid-argument",
        "$.effect.kind",
      ],
      [
        rec.beforeToolCall({ name: "lookup", args: {}, effect: { idempotent: "yes" } as never }),
        "invalid-argument",
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
      [{ effect: { kind: "sometimes", idempotent: true } }, "invalid-argument", "$.effect.kind"],
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
