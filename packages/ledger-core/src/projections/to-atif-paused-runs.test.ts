import { describe, expect, it } from "vitest";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { toAtif } from "./to-atif.js";

const ACTOR = { type: "agent", id: "main" } as const;

describe("toAtif of a run paused awaiting a decision", () => {
  it("names, for a call a crash left in flight, the attempt that was in flight (in_flight_attempt_id)", async () => {
    // A resume asks about a call in flight at the crash as an approval: the checkpoint names its
    // attempt, which may have had its effect. The trajectory must say which call that is, as
    // inspection does, or a reader of the ATIF takes it for a call never made.
    const store = new MemoryEventStore();
    const run = new SessionRecorder({ store, sessionId: "s", runId: "main", actor: ACTOR });
    await run.startRun();
    const model = await run.beforeModelCall({ request: { model: "m", messages: [] } });
    const completed = await run.modelCompleted(model, {
      toolCalls: [
        { id: "c1", name: "charge", args: { amount: 5 } },
        { id: "c2", name: "refund", args: { amount: 2 } },
      ],
    });
    const charge = await run.beforeToolCall({
      toolCallId: "c1",
      name: "charge",
      args: { amount: 5 },
      causedByEventId: completed.eventId,
    });
    await run.checkpoint({
      awaitingDecision: {
        calls: [
          {
            name: "charge",
            toolCallId: "c1",
            args: { amount: 5 },
            agent: "main",
            inFlightAttemptId: charge.attemptId,
          },
          { name: "refund", toolCallId: "c2", args: { amount: 2 } },
        ],
        decideWith: "resumeRun",
      },
    });

    const trajectory = await toAtif(store, "s");
    expect(trajectory.extra?.awaiting_decision).toMatchObject({
      calls: [
        {
          name: "charge",
          tool_call_id: "c1",
          arguments: { amount: 5 },
          agent: "main",
          in_flight_attempt_id: charge.attemptId,
        },
        { name: "refund", tool_call_id: "c2", arguments: { amount: 2 } },
      ],
      decide_with: "resumeRun",
    });
    // Only the call that was in flight: the other was never requested.
    const pause = trajectory.extra?.awaiting_decision as { calls: object[] } | undefined;
    expect(pause?.calls[1] ?? {}).not.toHaveProperty("in_flight_attempt_id");
    // The same attempt as the step's call shows, so a reader can join the two.
    const step = trajectory.steps.find((each) => each.tool_calls?.length);
    const shown = step?.tool_calls?.find((call) => call.tool_call_id === "c1");
    expect(shown?.extra?.attempt_id).toBe(charge.attemptId);
  });
});
