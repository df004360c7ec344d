import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import type { EventStore } from "../store/event-store.js";
import { readWholeRun } from "../store/read-all.js";
import { scratchDirectory } from "../testing/scratch-directory.js";
import { memoryAndSqlite, watched } from "./memory-and-sqlite.test.data.js";
import { SessionRecorder } from "./session-recorder.js";

// `declineToolCall`: a call a person declined before it started is recorded as requested and
// abandoned in one append, never as a call in flight.

const dir = scratchDirectory("agent-ledger-declined-", { beforeAll, afterAll });
const agent: Actor = { type: "agent", id: "shop" };
const person: Actor = { type: "human", id: "ops" };
const address = { sessionId: "s1", runId: "r1" };
const refund = { toolCallId: "call-refund", name: "refund", args: { order: "42" } };

const stores = memoryAndSqlite(dir);

async function startedRun(open: () => Promise<EventStore>) {
  const store = await open();
  onTestFinished(() => store.close());
  const recorder = new SessionRecorder({ store, ...address, actor: agent });
  await recorder.startRun();
  return { store, recorder, ...watched(store) };
}

const types = async (store: EventStore) =>
  (await readWholeRun(store, address)).map((event) => event.type);

describe.each(stores)("declineToolCall (%s)", (_name, open) => {
  it("records the request and its abandonment in one append, and resolves with the call answered as abandoned", async () => {
    const { store, recorder, appends } = await startedRun(open);
    const declined = await recorder.declineToolCall(
      { ...refund, effect: { kind: "write" }, metadata: { toolType: "function" } },
      "denied at its approval request: not this order",
      { actor: person, metadata: { source: "approval" } },
    );
    expect(appends).toHaveLength(1);
    expect(appends[0]?.events.map((event) => event.type)).toEqual([
      "tool.requested",
      "attempt.abandoned",
    ]);
    const [, requested, abandoned] = await readWholeRun(store, address);
    expect(requested).toMatchObject({
      type: "tool.requested",
      attemptId: declined.attemptId,
      actor: agent,
      metadata: { toolType: "function" },
      payload: {
        toolCallId: "call-refund",
        name: "refund",
        args: { order: "42" },
        effect: { kind: "write", idempotent: false },
      },
    });
    expect(abandoned).toMatchObject({
      type: "attempt.abandoned",
      attemptId: declined.attemptId,
      stepId: declined.stepId,
      causedByEventId: requested?.eventId,
      actor: person,
      metadata: { source: "approval" },
      payload: {
        reason: "denied at its approval request: not this order",
        toolCallId: "call-refund",
        declined: true,
      },
    });
    expect(declined).toMatchObject({
      kind: "tool",
      name: "refund",
      toolCallId: "call-refund",
      requestedEventId: requested?.eventId,
      seq: requested?.seq,
      replayed: {
        status: "abandoned",
        reason: "denied at its approval request: not this order",
        eventId: abandoned?.eventId,
        metadata: { source: "approval" },
      },
    });
    const inspection = await inspectSession(store, address.sessionId);
    expect(inspection.unresolved).toEqual([]);
    // Inspection tells it from a call abandoned after it may have run.
    expect(inspection.runs[0]?.steps[0]?.attempts[0]).toMatchObject({
      status: "abandoned",
      declined: true,
      outcome: "denied at its approval request: not this order",
    });
    // Nothing is left in flight: the run completes.
    await recorder.completeRun("done");
  });

  it("on resume answers a call the ledger holds declined, writing nothing", async () => {
    const { store, recorder } = await startedRun(open);
    const first = await recorder.declineToolCall(refund, "denied");
    const resumed = await SessionRecorder.resume({ store, ...address, actor: agent });
    const again = await resumed.declineToolCall(refund, "denied");
    expect(again.attemptId).toBe(first.attemptId);
    expect(again.replayed).toMatchObject({ status: "abandoned", reason: "denied" });
    expect(await types(store)).toEqual(["run.started", "tool.requested", "attempt.abandoned"]);
  });

  it("on resume abandons a call the ledger holds only as requested (a decline written in two appends, cut off by a crash)", async () => {
    const { store, recorder } = await startedRun(open);
    const requested = await recorder.beforeToolCall(refund);
    const resumed = await SessionRecorder.resume({ store, ...address, actor: agent });
    const declined = await resumed.declineToolCall(refund, "denied");
    expect(declined.attemptId).toBe(requested.attemptId);
    expect(declined.replayed).toMatchObject({ status: "abandoned", reason: "denied" });
    expect(await types(store)).toEqual(["run.started", "tool.requested", "attempt.abandoned"]);
    // It may have begun (its request stood alone): abandoned, not said to be declined unrun.
    const inspection = await inspectSession(store, address.sessionId);
    expect(inspection.unresolved).toEqual([]);
    expect(inspection.runs[0]?.steps[0]?.attempts[0]?.declined).toBeUndefined();
    await resumed.completeRun("done");
  });

  it("declined again after its append's reply was lost: the decline that got in is the one, nothing written twice", async () => {
    const { store, recorder, faults } = await startedRun(open);
    faults.loseReplies = 3;
    const lost = await recorder.declineToolCall(refund, "denied").catch((error: unknown) => error);
    expect(LedgerError.isInstance(lost, "store-unavailable")).toBe(true);
    const again = await recorder.declineToolCall(refund, "denied");
    expect(again.replayed).toMatchObject({ status: "abandoned", reason: "denied" });
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "attempt.abandoned",
    ]);
    expect(again.attemptId).toBe(events[1]?.attemptId);
    expect(again.replayed?.eventId).toBe(events[2]?.eventId);
    await recorder.completeRun("done");
  });

  it("abandons the request a beforeToolCall of the same call left stored when its reply was lost", async () => {
    const { store, recorder, faults } = await startedRun(open);
    faults.loseReplies = 3;
    await expect(recorder.beforeToolCall(refund)).rejects.toMatchObject({
      code: "store-unavailable",
    });
    const declined = await recorder.declineToolCall(refund, "denied");
    const events = await readWholeRun(store, address);
    expect(events.map((event) => event.type)).toEqual([
      "run.started",
      "tool.requested",
      "attempt.abandoned",
    ]);
    expect(declined.attemptId).toBe(events[1]?.attemptId);
    await recorder.completeRun("done");
  });

  it("refuses bad input with its path and writes nothing", async () => {
    const { store, recorder } = await startedRun(open);
    const refused = async (decline: () => Promise<unknown>) =>
      decline().then(
        () => undefined,
        (error: unknown) =>
          LedgerError.isInstance(error) ? { code: error.code, path: error.path } : error,
      );
    expect(await refused(() => recorder.declineToolCall(refund, ""))).toEqual({
      code: "invalid-argument",
      path: "$.reason",
    });
    expect(
      await refused(() => recorder.declineToolCall({ ...refund, args: { at: new Date() } }, "no")),
    ).toEqual({ code: "non-serializable", path: "$.at" });
    expect(
      await refused(() =>
        recorder.declineToolCall({ ...refund, toolCallID: "c" } as typeof refund, "no"),
      ),
    ).toMatchObject({ code: "invalid-argument" });
    expect(
      await refused(() =>
        recorder.declineToolCall(refund, "no", { author: person } as { actor?: Actor }),
      ),
    ).toMatchObject({ code: "invalid-argument" });
    expect(
      await refused(() =>
        recorder.declineToolCall(refund, "no", { actor: { type: "robot", id: "x" } as never }),
      ),
    ).toMatchObject({ code: "invalid-argument", path: "$.options.actor.type" });
    expect(await types(store)).toEqual(["run.started"]);
  });

  it("on a closed run is refused with run-closed, nothing written", async () => {
    const { store, recorder } = await startedRun(open);
    await recorder.completeRun("done");
    await expect(recorder.declineToolCall(refund, "denied")).rejects.toMatchObject({
      code: "run-closed",
    });
    expect(await types(store)).toEqual(["run.started", "run.completed"]);
  });
});
