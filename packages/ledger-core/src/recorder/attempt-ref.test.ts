import { describe, expect, it } from "vitest";
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
});
