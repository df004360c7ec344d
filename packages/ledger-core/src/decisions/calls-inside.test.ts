import { describe, expect, it } from "vitest";
import { ConflictError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import type { AppendRequest } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeSession } from "../store/read-all.js";
import { settleCallsInside } from "./calls-inside.js";

const agent = { type: "agent" as const, id: "assistant" };
const ops = { type: "human" as const, id: "ops" };
const SESSION = "crashed";

/**
 * What a crash left on run "agent": research (call_0) tried, retried, in flight; inside it (run
 * "inside", caused by its first attempt) a model call answered, one in flight, lookup (l1) in
 * flight with a model call in flight in its run "deeper", and check (c1), which completed
 * before the crash but whose run "checked" still holds a call in flight. Beside research, send
 * (call_1) with its own run "sending".
 */
async function crashedLedger(store = new MemoryEventStore()) {
  const root = new SessionRecorder({ store, sessionId: SESSION, runId: "agent", actor: agent });
  await root.startRun();
  const first = await root.beforeToolCall({ toolCallId: "call_0", name: "research", args: {} });
  const research = await root.retry(first);
  const inside = root.child({
    runId: "inside",
    actor: agent,
    causedByEventId: first.requestedEventId,
  });
  await inside.startRun();
  await inside.modelCompleted(await inside.beforeModelCall({ request: { q: "outline" } }), "o");
  const model = await inside.beforeModelCall({ request: { q: "details" } });
  const lookup = await inside.beforeToolCall({ toolCallId: "l1", name: "lookup", args: {} });
  const deeper = inside.child({
    runId: "deeper",
    actor: agent,
    causedByEventId: lookup.requestedEventId,
  });
  await deeper.startRun();
  const deepest = await deeper.beforeModelCall({ request: { q: "inside lookup" } });
  const check = await inside.beforeToolCall({ toolCallId: "c1", name: "check", args: {} });
  const checked = inside.child({
    runId: "checked",
    actor: agent,
    causedByEventId: check.requestedEventId,
  });
  await checked.startRun();
  const late = await checked.beforeModelCall({ request: { q: "late" } });
  await inside.toolCompleted(check, "ok");
  const send = await root.beforeToolCall({ toolCallId: "call_1", name: "send", args: {} });
  const sending = root.child({
    runId: "sending",
    actor: agent,
    causedByEventId: send.requestedEventId,
  });
  await sending.startRun();
  await sending.beforeModelCall({ request: { q: "draft" } });
  return { store, research, model, lookup, deepest, late };
}

/** The events of each run, as `type` or `type: reason`. */
async function runsOf(store: MemoryEventStore) {
  const events = await readWholeSession(store, SESSION);
  const reason = (event: LedgerEvent) => (event.payload as { reason?: string } | null)?.reason;
  return (runId: string) =>
    events
      .filter((event) => event.runId === runId)
      .map((event) =>
        reason(event) === undefined ? event.type : `${event.type}: ${reason(event)}`,
      );
}

/** A person abandons research on run "agent", then settles what it left inside. */
async function abandonResearch(store: MemoryEventStore, reason: string) {
  const person = await SessionRecorder.resume({
    store,
    sessionId: SESSION,
    runId: "agent",
    actor: ops,
  });
  const [research] = (await inspectSession(store, SESSION)).unresolved;
  if (research?.name !== "research") throw new Error("research is not unresolved");
  await person.abandon(research, reason);
  return settleCallsInside({ recorder: person, call: research, ended: { abandoned: reason } });
}

const inResearch = "its tool call research (call_0) was abandoned: filed by hand";
const SETTLED_INSIDE = [
  "run.started",
  "model.requested",
  "model.completed",
  "model.requested",
  "tool.requested",
  "tool.requested",
  "tool.completed",
  `attempt.abandoned: ${inResearch}`,
  `attempt.abandoned: ${inResearch}`,
  "run.cancelled: filed by hand",
];

describe("settleCallsInside", () => {
  it("abandons what an abandoned tool call left in flight inside it, depth first, and cancels those runs", async () => {
    const { store, model, lookup, deepest, late } = await crashedLedger();
    const settled = await abandonResearch(store, "filed by hand");

    const runs = await runsOf(store);
    expect(runs("inside")).toEqual(SETTLED_INSIDE);
    expect(runs("deeper")).toEqual([
      "run.started",
      "model.requested",
      `attempt.abandoned: its tool call lookup (l1) was abandoned: ${inResearch}`,
      `run.cancelled: ${inResearch}`,
    ]);
    // check had ended before: its run closes as check ended, what it left is said so.
    expect(runs("checked")).toEqual([
      "run.started",
      "model.requested",
      "attempt.abandoned: left in flight by its tool call check (c1), which had ended: its answer was never recorded, and that tool call is not run again",
      "run.completed",
    ]);
    expect(runs("sending")).toEqual(["run.started", "model.requested"]);
    const unresolved = (await inspectSession(store, SESSION)).unresolved;
    expect(unresolved.map(({ runId }) => runId)).toEqual(["agent", "sending"]);
    expect(
      settled.map(({ runId, abandoned, closed }) => [
        runId,
        abandoned.map((a) => a.attemptId),
        closed,
      ]),
    ).toEqual([
      ["inside", [model.attemptId, lookup.attemptId], "cancelled"],
      ["deeper", [deepest.attemptId], "cancelled"],
      ["checked", [late.attemptId], "completed"],
    ]);
    // Written by the person whose recorder settles them.
    const written = (await readWholeSession(store, SESSION)).filter(
      (event) =>
        event.runId !== "agent" &&
        ["attempt.abandoned", "run.cancelled", "run.completed"].includes(event.type),
    );
    expect(written).toHaveLength(7);
    for (const event of written) expect(event.actor).toEqual(ops);
  });

  it("closes the runs of a call that ended as it ended: completed, or failed with its error", async () => {
    for (const ended of [
      { failed: false },
      { failed: true, error: new Error("no answer") },
    ] as const) {
      const { store, research } = await crashedLedger();
      const person = await SessionRecorder.resume({
        store,
        sessionId: SESSION,
        runId: "agent",
        actor: ops,
      });
      await settleCallsInside({ recorder: person, call: research, ended });
      const inside = (await readWholeSession(store, SESSION)).filter((e) => e.runId === "inside");
      expect(inside.at(-3)?.payload).toMatchObject({
        reason:
          "left in flight by its tool call research (call_0), which had ended: its answer was never recorded, and that tool call is not run again",
      });
      expect(inside.at(-1)?.type).toBe(ended.failed ? "run.failed" : "run.completed");
      if (ended.failed)
        expect(inside.at(-1)?.payload).toMatchObject({ error: { message: "no answer" } });
    }
  });

  it("leaves a run `leave` names as it is, and finds nothing to do from a recorder that was not resumed", async () => {
    const { store, research } = await crashedLedger();
    const person = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: "agent",
      actor: ops,
    });
    const left: string[] = [];
    const leave = ({ runId }: { runId: string }) => left.push(runId) > 0 && runId === "deeper";
    await settleCallsInside({ recorder: person, call: research, ended: { abandoned: "x" }, leave });
    const runs = await runsOf(store);
    expect(left).toEqual(["inside", "deeper", "checked"]);
    expect(runs("deeper")).toEqual(["run.started", "model.requested"]);
    expect(runs("inside").at(-1)).toBe("run.cancelled: x");

    const fresh = new SessionRecorder({ store, sessionId: SESSION, runId: "agent", actor: ops });
    expect(
      await settleCallsInside({ recorder: fresh, call: research, ended: { abandoned: "x" } }),
    ).toEqual([]);
  });

  it("refuses bad options with their path", async () => {
    const { store, research } = await crashedLedger();
    const recorder = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: "agent",
      actor: ops,
    });
    const cases: [unknown, string][] = [
      [{ call: research, ended: { abandoned: "x" } }, "$.recorder"],
      [{ recorder, call: { attemptId: "a" }, ended: { abandoned: "x" } }, "$.call"],
      [{ recorder, call: research, ended: { abandoned: "" } }, "$.ended"],
      [{ recorder, call: research, ended: { failed: "yes" } }, "$.ended"],
      [{ recorder, call: research, ended: { failed: false }, leave: "deeper" }, "$.leave"],
    ];
    for (const [options, path] of cases)
      await expect(settleCallsInside(options as never)).rejects.toMatchObject({
        code: "invalid-argument",
        path,
      });
  });
});

/**
 * A store that, at the first append of an event of `type` to run `runId`, first lets `other`
 * run (another writer settling the same run): the append then meets what the other wrote.
 */
class RacedStore extends MemoryEventStore {
  #other: (() => Promise<unknown>) | undefined;
  constructor(
    readonly runId: string,
    readonly type: string,
  ) {
    super();
  }
  raceWith(other: () => Promise<unknown>): void {
    this.#other = other;
  }
  override async append(request: AppendRequest) {
    const other = this.#other;
    if (other && request.runId === this.runId && request.events.some((e) => e.type === this.type)) {
      this.#other = undefined;
      await other();
    }
    return super.append(request);
  }
}

describe("settleCallsInside racing another writer on the same run", () => {
  it("moved on under it (conflict): reads the run again and abandons only what is left", async () => {
    const store = new RacedStore("inside", "attempt.abandoned");
    const { model } = await crashedLedger(store);
    // The other writer (a resume that died part way) abandoned the first call in flight there.
    store.raceWith(async () => {
      const other = await SessionRecorder.resume({
        store,
        sessionId: SESSION,
        runId: "agent",
        actor: agent,
      });
      await other.child({ runId: "inside", actor: agent }).abandon(model, inResearch);
    });
    const settled = await abandonResearch(store, "filed by hand");

    expect((await runsOf(store))("inside")).toEqual(SETTLED_INSIDE);
    const inside = (await readWholeSession(store, SESSION)).filter((e) => e.runId === "inside");
    expect(inside.slice(-3).map((event) => event.actor?.id)).toEqual(["assistant", "ops", "ops"]);
    const [entry] = settled;
    expect([entry?.abandoned.map((call) => call.name), entry?.closed]).toEqual([
      ["lookup"],
      "cancelled",
    ]);
  });

  it("closed under it (run-closed): reads the run again and keeps what the other did; nothing twice", async () => {
    const store = new RacedStore("inside", "run.cancelled");
    const { research } = await crashedLedger(store);
    // The other writer (a resume replaying the abandonment, or the CLI) settles it all first.
    store.raceWith(async () => {
      const other = await SessionRecorder.resume({
        store,
        sessionId: SESSION,
        runId: "agent",
        actor: agent,
      });
      await settleCallsInside({
        recorder: other,
        call: research,
        ended: { abandoned: "filed by hand" },
      });
    });
    const settled = await abandonResearch(store, "filed by hand");

    const runs = await runsOf(store);
    expect(runs("inside")).toEqual(SETTLED_INSIDE);
    expect(runs("deeper").filter((entry) => entry.startsWith("attempt."))).toHaveLength(1);
    expect(runs("checked").filter((entry) => entry.startsWith("run."))).toEqual([
      "run.started",
      "run.completed",
    ]);
    expect((await inspectSession(store, SESSION)).unresolved.map(({ runId }) => runId)).toEqual([
      "agent",
      "sending",
    ]);
    // This writer found the run closed by the other.
    expect(settled.find(({ runId }) => runId === "inside")?.closed).toBeUndefined();
  });

  it("gives up with the conflict after ten rounds against a run that never stops moving", async () => {
    class AlwaysMoved extends MemoryEventStore {
      moving = false;
      tries = 0;
      override async append(request: AppendRequest) {
        if (this.moving && request.runId === "inside") {
          this.tries++;
          throw new ConflictError({ ...request, actualSeq: request.expectedSeq + 1 });
        }
        return super.append(request);
      }
    }
    const store = new AlwaysMoved();
    await crashedLedger(store);
    store.moving = true;
    await expect(abandonResearch(store, "x")).rejects.toMatchObject({ code: "conflict" });
    expect(store.tries).toBe(10);
    expect((await runsOf(store))("inside").at(-1)).toBe("tool.completed");
  });
});
