import { describe, expect, it } from "vitest";
import { resolveEvents } from "../compact/resolve.js";
import {
  InvalidEventError,
  LedgerError,
  type LedgerErrorCode,
  StoreUnavailableError,
} from "../events/errors.js";
import type { Actor, LedgerEvent } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import type { AppendRequest, AppendResult } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SessionRecorder } from "./session-recorder.js";

const actor: Actor = { type: "agent", id: "planner" };
const address = { sessionId: "session-1", runId: "run-1" };

async function refused(promise: Promise<unknown>, path: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
  expect((error as LedgerError).path).toBe(path);
}

async function outcomeTypes(store: MemoryEventStore): Promise<string[]> {
  return (await readWholeRun(store, address))
    .map((event) => event.type)
    .filter((type) => !type.endsWith(".requested") && type !== "run.started");
}

describe("one outcome per attempt", () => {
  it("a second completion, failure or abandonment of an attempt is refused and writes nothing", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    await recorder.modelCompleted(model, { text: "first" });
    await refused(recorder.modelCompleted(model, { text: "second" }), "$");
    await refused(recorder.modelFailed(model, new Error("aborted after the end")), "$");
    await refused(recorder.abandon(model, "late"), "$");
    const tool = await recorder.beforeToolCall({ toolCallId: "c1", name: "t", args: {} });
    await recorder.abandon(tool, "a person said so");
    await refused(recorder.toolCompleted(tool, 42), "$");
    await refused(recorder.toolFailed(tool, new Error("late")), "$");
    expect(await outcomeTypes(store)).toEqual(["model.completed", "attempt.abandoned"]);
    const inspection = await inspectSession(store, address.sessionId);
    expect(inspection.runs[0]?.steps.map((step) => step.attempts[0]?.outcome)).toEqual([
      { text: "first" },
      "a person said so",
    ]);
  });

  it("a completion racing a failure (stream end vs abort) records exactly one of them", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    const results = await Promise.allSettled([
      recorder.modelCompleted(model, { text: "done" }),
      recorder.modelFailed(model, new Error("aborted")),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected"]);
    expect(await outcomeTypes(store)).toEqual(["model.completed"]);
  });

  it("an outcome of the other kind of call is refused, naming the kind", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    const tool = await recorder.beforeToolCall({ name: "t", args: {} });
    await refused(recorder.toolCompleted(model, 1), "$.kind");
    await refused(recorder.toolFailed(model, new Error("x")), "$.kind");
    await refused(recorder.modelCompleted(tool, {}), "$.kind");
    await refused(recorder.modelFailed(tool, new Error("x")), "$.kind");
    expect(await outcomeTypes(store)).toEqual([]);
    // The attempts are still open for their real outcome.
    await recorder.modelCompleted(model, { text: "ok" });
    await recorder.toolCompleted(tool, 1);
    expect(await outcomeTypes(store)).toEqual(["model.completed", "tool.completed"]);
  });

  it("an outcome the store refused (nothing written) can be recorded again", async () => {
    class RefuseOnce extends MemoryEventStore {
      refuse = false;
      override async append(request: AppendRequest) {
        if (this.refuse) {
          this.refuse = false;
          throw new InvalidEventError("$.events[0]", "refused by the test store");
        }
        return super.append(request);
      }
    }
    const store = new RefuseOnce();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const tool = await recorder.beforeToolCall({ name: "t", args: {} });
    store.refuse = true;
    await expect(recorder.toolCompleted(tool, 1)).rejects.toThrow("refused by the test store");
    await recorder.toolCompleted(tool, 1);
    expect(await outcomeTypes(store)).toEqual(["tool.completed"]);
  });

  it("an outcome whose reply was lost is not recorded a second time", async () => {
    // The append committed and its reply never came (the commit queue's own retries lost too):
    // a second toolCompleted would append another outcome under a new eventId.
    class LoseReplies extends MemoryEventStore {
      lose = false;
      override async append(request: AppendRequest) {
        const result = await super.append(request);
        if (this.lose) throw new StoreUnavailableError("the reply was lost");
        return result;
      }
    }
    const store = new LoseReplies();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const tool = await recorder.beforeToolCall({ name: "t", args: {} });
    store.lose = true;
    await expect(recorder.toolCompleted(tool, 1)).rejects.toThrow("the reply was lost");
    store.lose = false;
    await expect(recorder.toolCompleted(tool, 1)).rejects.toMatchObject({
      code: "invalid-argument",
    });
    expect(await outcomeTypes(store)).toEqual(["tool.completed"]);
  });

  it("an attempt answered from the ledger on resume is not abandoned on top of its outcome", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, ...address, actor });
    await first.startRun();
    const call = await first.beforeToolCall({ toolCallId: "c1", name: "t", args: {} });
    await first.toolCompleted(call, 42);
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const replayed = await resumed.beforeToolCall({ toolCallId: "c1", name: "t", args: {} });
    expect(replayed.replayed?.status).toBe("completed");
    await refused(resumed.abandon(replayed, "too late"), "$");
    // Completing it again answers with the recorded outcome, as before.
    expect((await resumed.toolCompleted(replayed, 42)).type).toBe("tool.completed");
    expect(await outcomeTypes(store)).toEqual(["tool.completed"]);
  });

  it("an outcome's blobs share its append's fate: not stored, it can be recorded again with them", async () => {
    // A long response is kept in a blob that travels with the outcome's append.
    class RefusingBlobs extends MemoryEventStore {
      failure: Error | undefined;
      override async append(request: AppendRequest): Promise<AppendResult> {
        if (this.failure !== undefined && (request.blobs?.length ?? 0) > 0) throw this.failure;
        return super.append(request);
      }
    }
    const store = new RefusingBlobs();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const response = { text: "a long answer ".repeat(200) };
    // Refused (nothing written, for certain): the outcome can be recorded again.
    const refused = await recorder.beforeModelCall({ request: { q: 1 } });
    store.failure = new InvalidEventError("$.blobs[0]", "not today");
    await expect(recorder.modelCompleted(refused, response)).rejects.toThrow("not today");
    expect(await outcomeTypes(store)).toEqual([]);
    store.failure = undefined;
    await recorder.modelCompleted(refused, response);
    expect(await outcomeTypes(store)).toEqual(["model.completed"]);
    // Unknown (the append may have landed): the next call reads the run back first, finds
    // neither the event nor its blob, and records the outcome, blob and all.
    const unknown = await recorder.beforeModelCall({ request: { q: 2 } });
    store.failure = new StoreUnavailableError("the connection dropped");
    const again = { text: "another long answer ".repeat(200) };
    await expect(recorder.modelCompleted(unknown, again)).rejects.toThrow("the connection dropped");
    store.failure = undefined;
    await recorder.modelCompleted(unknown, again);
    expect(await outcomeTypes(store)).toEqual(["model.completed", "model.completed"]);
    const [, stored] = (await readWholeRun(store, address)).filter(
      (event) => event.type === "model.completed",
    );
    expect((await resolveEvents(store, [stored as LedgerEvent]))[0]?.payload).toMatchObject({
      response: again,
    });
  });
});

describe("one outcome per attempt, whatever object names it", () => {
  it("a copy of an attempt that has its outcome, or its bare ids, is refused and writes nothing", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const tool = await recorder.beforeToolCall({ name: "send_email", args: {} });
    await recorder.toolCompleted(tool, { sent: true });
    await refused(recorder.toolFailed({ ...tool }, new Error("late")), "$");
    await refused(recorder.toolCompleted({ ...tool }, { sent: true }), "$");
    const ids = {
      stepId: tool.stepId,
      attemptId: tool.attemptId,
      requestedEventId: tool.requestedEventId,
    };
    await refused(recorder.abandon(ids, "x"), "$");
    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    await recorder.modelFailed(model, new Error("429"));
    await refused(recorder.modelCompleted(structuredClone(model), { text: "late" }), "$");
    // An attempt this run never requested (another run's, or made up) is no open attempt either.
    const other = new SessionRecorder({
      store,
      sessionId: address.sessionId,
      runId: "run-2",
      actor,
    });
    const foreign = await other.beforeToolCall({ name: "t", args: {} });
    await refused(recorder.toolCompleted(foreign, 1), "$");
    await refused(recorder.abandon({ ...ids, attemptId: "never-requested" }, "x"), "$");
    expect(await outcomeTypes(store)).toEqual(["tool.completed", "model.failed"]);
    // The other run's attempt is still open there.
    await other.toolCompleted({ ...foreign }, 1);
  });

  it("record() of an outcome event claims its attempt too, and record() of a request opens one", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const tool = await recorder.beforeToolCall({ name: "send_email", args: {} });
    const outcome = {
      stepId: tool.stepId,
      attemptId: tool.attemptId,
      causedByEventId: tool.requestedEventId,
    };
    await recorder.record({ type: "tool.completed", ...outcome, payload: { result: 1 } });
    await refused(recorder.record({ type: "tool.failed", ...outcome, payload: {} }), "$");
    await refused(recorder.toolFailed(tool, new Error("late")), "$");
    // A request written by record() is an open attempt: its one outcome goes through.
    const requested = await recorder.record({
      type: "tool.requested",
      stepId: "st-2",
      attemptId: "at-2",
      payload: {
        name: "t",
        args: {},
        requestHash: "h",
        effect: { kind: "read", idempotent: true },
      },
    });
    const ids = { stepId: "st-2", attemptId: "at-2", requestedEventId: requested.eventId };
    await recorder.abandon(ids, "a person decided");
    await refused(recorder.abandon(ids, "again"), "$");
    expect(await outcomeTypes(store)).toEqual(["tool.completed", "attempt.abandoned"]);
  });

  it("copies racing to give one attempt an outcome record exactly one", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    const results = await Promise.allSettled([
      recorder.modelCompleted({ ...model }, { text: "done" }),
      recorder.modelFailed({ ...model }, new Error("aborted")),
      recorder.abandon({ ...model }, "the user went away"),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "rejected"]);
    expect(await outcomeTypes(store)).toEqual(["model.completed"]);
  });

  it("after a resume, attempts the ledger holds resolved are refused and unresolved ones take one outcome", async () => {
    const store = new MemoryEventStore();
    const first = new SessionRecorder({ store, ...address, actor });
    await first.startRun();
    const done = await first.beforeToolCall({ toolCallId: "c1", name: "t", args: {} });
    await first.toolCompleted(done, 1);
    await first.beforeToolCall({ toolCallId: "c2", name: "pay", args: {} });
    // The process dies with pay in flight; a person resolves it from another process, as the
    // CLI's `resolve` does: with the ids inspection shows.
    const inspection = await inspectSession(store, address.sessionId, { resolve: false });
    const attempts = inspection.runs[0]?.steps.flatMap((step) => step.attempts) ?? [];
    const ids = attempts.map((attempt) => ({
      stepId: attempt.stepId,
      attemptId: attempt.attemptId,
      requestedEventId: attempt.requestEventId,
    }));
    const operator = await SessionRecorder.resume({ store, ...address, actor, resolve: false });
    await refused(operator.abandon(ids[0] as never, "already done"), "$");
    await operator.abandon(ids[1] as never, "the bank says no payment was made");
    await refused(operator.abandon(ids[1] as never, "twice"), "$");
    expect(await outcomeTypes(store)).toEqual(["tool.completed", "attempt.abandoned"]);
  });

  it("a child run adopted on resume knows its unresolved attempts before its first call", async () => {
    const store = new MemoryEventStore();
    const parent = new SessionRecorder({ store, ...address, actor });
    await parent.startRun();
    const child = parent.child({ actor: { type: "agent", id: "helper" } });
    await child.startRun();
    const inFlight = await child.beforeToolCall({ name: "pay", args: {} });
    const resumed = await SessionRecorder.resume({ store, ...address, actor });
    const adopted = resumed.child({ actor: { type: "agent", id: "helper" } });
    expect(adopted.runId).toBe(child.runId);
    await adopted.abandon({ ...inFlight }, "checked: never paid");
    await refused(adopted.abandon({ ...inFlight }, "twice"), "$");
    const events = await readWholeRun(store, { sessionId: address.sessionId, runId: child.runId });
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "attempt.abandoned",
    ]);
  });
});

describe("an outcome the ledger refuses", () => {
  it("rejects, never throws: outcomes recorded together with allSettled each get theirs", async () => {
    const store = new MemoryEventStore();
    // A redaction that empties failures: the recorder refuses a failure payload that is no object.
    const recorder = new SessionRecorder({
      store,
      ...address,
      actor,
      redact: (payload, { type }) => (type.endsWith(".failed") ? null : payload),
    });
    await recorder.startRun();
    const tools = await Promise.all(
      ["c1", "c2"].map((toolCallId) =>
        recorder.beforeToolCall({ toolCallId, name: "t", args: {} }),
      ),
    );
    const results = [{ when: new Date(0) }, "fine"]; // the first tool returned a Date
    const settled = await Promise.allSettled(
      tools.map((tool, index) => recorder.toolCompleted(tool, results[index])),
    );
    expect(settled.map((outcome) => outcome.status)).toEqual(["rejected", "fulfilled"]);
    expect(await outcomeTypes(store)).toEqual(["tool.completed"]);

    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    // A missing attempt is a TypeError (the code is not checked), but rejected all the same.
    const refusals: [() => Promise<unknown>, LedgerErrorCode | undefined][] = [
      [() => recorder.modelCompleted(model, { tokens: 1n }), "non-serializable"],
      [() => recorder.modelFailed(model, new Error("x")), "invalid-argument"],
      [() => recorder.toolFailed(tools[0] as never, new Error("x")), "invalid-argument"],
      [() => recorder.toolCompleted(undefined as never, 1), undefined],
      [() => recorder.toolFailed(undefined as never, new Error("x")), undefined],
      [() => recorder.retry(undefined as never), undefined],
    ];
    for (const [call, code] of refusals) {
      let promise: Promise<unknown> | undefined;
      expect(() => {
        promise = call();
      }).not.toThrow();
      await expect(promise).rejects.toSatisfy(
        (error) => code === undefined || LedgerError.isInstance(error, code),
      );
    }
    expect(await outcomeTypes(store)).toEqual(["tool.completed"]);
  });

  it("bad metadata is named in the caller's argument, for a failure as for a completion", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const tool = await recorder.beforeToolCall({ name: "t", args: {} });
    const model = await recorder.beforeModelCall({ request: { q: 1 } });
    const metadata = { when: new Date(0) } as never;
    for (const promise of [
      recorder.toolFailed(tool, new Error("x"), { metadata }),
      recorder.modelFailed(model, new Error("x"), { metadata }),
      recorder.toolCompleted(tool, 1, { metadata }),
    ])
      await expect(promise).rejects.toMatchObject({ path: "$.metadata.when" });
    // Nothing was written: the outcome can still be recorded.
    await recorder.toolFailed(tool, new Error("x"), { metadata: { when: "1970-01-01" } });
    expect(await outcomeTypes(store)).toEqual(["tool.failed"]);
  });
});

describe("an outcome whose append was retried after an unknown outcome", () => {
  it("is not said to be unwritten when only the last try wrote nothing: the recorder finds it stored", async () => {
    // The first try commits and loses its connection (unknown outcome), the retry meets a full
    // disk (nothing written by it): the event is stored, so the error must not say otherwise.
    const inner = new MemoryEventStore();
    let mode: "normal" | "commit-then-drop" | "full" = "normal";
    const append = async (request: AppendRequest): Promise<AppendResult> => {
      if (mode === "commit-then-drop") {
        mode = "full";
        await inner.append(request);
        throw new StoreUnavailableError("connection lost after the commit");
      }
      if (mode === "full")
        throw new StoreUnavailableError("disk full", undefined, { nothingWritten: true });
      return inner.append(request);
    };
    const store = new Proxy(inner, {
      get(target, key) {
        if (key === "append") return append;
        const value = Reflect.get(target, key, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const recorder = new SessionRecorder({ store, ...address, actor });
    await recorder.startRun();
    const pay = await recorder.beforeToolCall({ toolCallId: "p", name: "pay", args: {} });
    mode = "commit-then-drop";
    const failure = await recorder.toolCompleted(pay, "paid").catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "store-unavailable", nothingWritten: false });
    mode = "normal";
    // Stored once: a second outcome is refused, and the run goes on where the store is.
    await expect(recorder.toolCompleted(pay, "paid")).rejects.toMatchObject({
      code: "invalid-argument",
    });
    await recorder.completeRun("done");
    expect(await outcomeTypes(inner)).toEqual(["tool.completed", "run.completed"]);
  });
});
