import { describe, expect, it } from "vitest";
import { LedgerError } from "../events/errors.js";
import { inspectSession } from "../inspect/inspect-session.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

const actor = { type: "agent", id: "shop" } as const;

async function chargeCutOff() {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  const charge = await recorder.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} });
  recorder.leaveUnresolved(charge, "its caller aborted it while it ran");
  return { store, recorder, charge };
}

describe("SessionRecorder.leaveUnresolved", () => {
  it("keeps the call unresolved and completeRun refused, naming why and the command, until it is decided", async () => {
    const { store, recorder, charge } = await chargeCutOff();
    const refusal = await recorder.completeRun({}).catch((error: unknown) => error);
    expect(LedgerError.isInstance(refusal, "unresolved-attempt")).toBe(true);
    const message = (refusal as LedgerError).message;
    expect(message).toContain("its caller aborted it while it ran");
    expect(message).toContain(`agent-ledger resolve --abandon "reason" -- s ${charge.attemptId}`);
    const { unresolved } = await inspectSession(store, "s");
    expect(unresolved.map((attempt) => attempt.attemptId)).toEqual([charge.attemptId]);
    await recorder.abandon(charge, "the bank shows no charge");
    await recorder.completeRun({});
    expect(recorder.status).toBe("completed");
  });

  it("a resume in the same process refuses the call saying it was left so and why, not that a process died", async () => {
    const { store, charge } = await chargeCutOff();
    const resumed = await SessionRecorder.resume({ store, sessionId: "s", runId: "r", actor });
    const refusal = await resumed
      .beforeToolCall({ toolCallId: "c1", name: "charge", args: {} })
      .catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: "unresolved-attempt", attemptId: charge.attemptId });
    const message = (refusal as LedgerError).message;
    expect(message).toMatch(
      /^tool call charge \(c1\) was left without an outcome by this process, not cut off by a crash: its caller aborted it while it ran\. It is not declared idempotent/,
    );
    expect(message).not.toContain("process died");
    // A call of the same run this process did not leave so reads as a crash may have cut it off.
    const other = await resumed.beforeToolCall({ toolCallId: "c2", name: "charge", args: {} });
    const again = await SessionRecorder.resume({ store, sessionId: "s", runId: "r", actor });
    await again.beforeToolCall({ toolCallId: "c1", name: "charge", args: {} }).catch(() => {});
    const cut = await again
      .beforeToolCall({ toolCallId: "c2", name: "charge", args: {} })
      .catch((error: unknown) => error);
    expect(cut).toMatchObject({ code: "unresolved-attempt", attemptId: other.attemptId });
    expect((cut as LedgerError).message).toContain(
      "was in flight when the process died, or was left without an outcome by the process that made it",
    );
  });

  it("is lifted by the call's outcome, when it comes after all", async () => {
    const { recorder, charge } = await chargeCutOff();
    await recorder.toolCompleted(charge, { charged: 5 });
    await recorder.completeRun({});
    expect(recorder.status).toBe("completed");
  });

  it("refuses an attempt that has its outcome, or no reason, writing nothing", async () => {
    const { store, recorder, charge } = await chargeCutOff();
    await recorder.toolCompleted(charge, { charged: 5 });
    const before = (await store.readSession({ sessionId: "s" })).events.length;
    expect(() => recorder.leaveUnresolved(charge, "cut off")).toThrow(/already has an outcome/);
    const next = await recorder.beforeToolCall({ toolCallId: "c2", name: "charge", args: {} });
    let error: unknown;
    try {
      recorder.leaveUnresolved(next, "");
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toMatchObject({ code: "invalid-argument", path: "$.why" });
    expect((await store.readSession({ sessionId: "s" })).events.length).toBe(before + 1);
  });
});
