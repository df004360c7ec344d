import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import type { Actor } from "../events/types.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { readWholeRun } from "../store/read-all.js";
import { SessionRecorder } from "./session-recorder.js";

const agent: Actor = { type: "agent", id: "planner" };
const person: Actor = { type: "human", id: "ops" };
const address = { sessionId: "session-1", runId: "run-1" };

/** A run whose two tool calls were in flight when its process stopped. */
async function twoCallsInFlight(): Promise<MemoryEventStore> {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, ...address, actor: agent });
  await recorder.startRun();
  await recorder.beforeToolCall({ toolCallId: "c1", name: "send_email", args: { to: "ann" } });
  await recorder.beforeToolCall({ toolCallId: "c2", name: "charge", args: { cents: 500 } });
  return store;
}

describe("abandon and approve take an attempt as inspectSession reports it", () => {
  it("records the decision caused by the attempt's request event, as for the recorder's own attempt", async () => {
    const store = await twoCallsInFlight();
    const [email, charge] = (await inspectSession(store, address.sessionId)).unresolved;
    if (email === undefined || charge === undefined) throw new Error("two unresolved calls");
    const resumed = await SessionRecorder.resume({ store, ...address, actor: person });
    await resumed.abandon(email, "checked the outbox: sent");
    await resumed.approve(charge, "the bank shows no payment");
    const decisions = (await readWholeRun(store, address)).filter((event) =>
      event.type.startsWith("attempt."),
    );
    expect(decisions.map((event) => [event.type, event.attemptId, event.causedByEventId])).toEqual([
      ["attempt.abandoned", email.attemptId, email.requestEventId],
      ["attempt.approved", charge.attemptId, charge.requestEventId],
    ]);
    const payloads = decisions.map((event) => event.payload as { toolCallId?: string });
    expect(payloads.map((payload) => payload.toolCallId)).toEqual(["c1", "c2"]);
    const after = await inspectSession(store, address.sessionId);
    expect(after.unresolved.map((attempt) => attempt.attemptId)).toEqual([charge.attemptId]);
  });

  it("approve is refused for an attempt its run does not hold open, as abandon is, and writes nothing", async () => {
    const store = await twoCallsInFlight();
    const other = new SessionRecorder({
      store,
      sessionId: address.sessionId,
      runId: "run-2",
      actor: agent,
    });
    await other.startRun();
    await other.beforeToolCall({ toolCallId: "c1", name: "send_email", args: { to: "bob" } });
    const unresolved = (await inspectSession(store, address.sessionId)).unresolved;
    const ofRun2 = unresolved.find((attempt) => attempt.runId === "run-2");
    const [email] = unresolved;
    if (ofRun2 === undefined || email === undefined) throw new Error("unresolved calls");
    const resumed = await SessionRecorder.resume({ store, ...address, actor: person });
    const before = (await readWholeRun(store, address)).length;
    const refusal = async (decide: Promise<unknown>) => {
      const error = await decide.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(LedgerError.isInstance(error, "invalid-argument"), String(error)).toBe(true);
      return (error as LedgerError).message;
    };
    // Another run's attempt: only that run's resume would hear the approval.
    expect(await refusal(resumed.approve(ofRun2, "not sent"))).toContain("run run-2");
    // An attempt that already has its outcome: there is nothing left to approve.
    await resumed.abandon(email, "sent after all");
    expect(await refusal(resumed.approve(email, "run it again"))).toContain(
      "already has an outcome",
    );
    // An id is not an attempt: a LedgerError says what to pass, not a TypeError.
    expect(await refusal(resumed.abandon(email.attemptId as never, "x"))).toContain("not its id");
    expect(await refusal(resumed.approve(email.attemptId as never, "x"))).toContain("not its id");
    // Without its request event the decision would name no cause.
    const [, charge] = unresolved;
    if (charge === undefined) throw new Error("the charge is unresolved");
    const { stepId, attemptId } = charge;
    expect(await refusal(resumed.approve({ stepId, attemptId } as never, "x"))).toContain(
      "request event",
    );
    expect((await readWholeRun(store, address)).length).toBe(before + 1);
  });
});
