import { MemoryEventStore, SessionRecorder } from "@agent-ledger/core";
import { describe, expect, it } from "vitest";
import { retryLive } from "./model-retry.js";
import { ToolCauses } from "./tool-causes.js";

const SESSION = "s1";
const RUN = "run-1";
const ACTOR = { type: "agent", id: "langchain" } as const;

/** A model call recorded on `recorder`, its answer asking for `toolCallId`, as ModelRuns notes it. */
async function answered(
  recorder: SessionRecorder,
  causes: ToolCauses,
  request: string,
  toolCallId: string,
) {
  const attempt = await recorder.beforeModelCall({ request: { messages: [request] } });
  const response = { toolCalls: [{ id: toolCallId, name: "charge", args: {} }] };
  const event = await recorder.modelCompleted(attempt, response);
  causes.note(response.toolCalls, event.eventId, undefined);
  causes.noteStep(event.eventId, attempt.stepId);
  return { eventId: event.eventId, attempt };
}

describe("ToolCauses", () => {
  it("keeps no step per model call of a run it did not resume, however many calls it hears of", async () => {
    const store = new MemoryEventStore();
    const recorder = new SessionRecorder({ store, sessionId: SESSION, runId: RUN, actor: ACTOR });
    await recorder.startRun();
    const causes = new ToolCauses();
    let last: { eventId: string } | undefined;
    for (let call = 0; call < 500; call++)
      last = await answered(recorder, causes, `turn ${call}`, `call-${call}`);

    expect(causes.kept.steps).toBe(0);
    // Each call still has the completion that asked for it as its cause.
    expect(causes.causeOf(undefined, "call-499")).toBe(last?.eventId);
  });

  it("on a resumed run, keeps the recorded steps and their answers again, not the later model calls, and still knows the same turn", async () => {
    const store = new MemoryEventStore();
    const crashed = new SessionRecorder({ store, sessionId: SESSION, runId: RUN, actor: ACTOR });
    await crashed.startRun();
    const causes = new ToolCauses();
    const recorded = await answered(crashed, causes, "pay 5", "call-charge");
    await crashed.beforeToolCall({ toolCallId: "call-charge", name: "charge", args: {} });

    // A new process resumes the run: its model asked again for the recorded step (a sub-agent
    // the tool runs again is called live), then goes on for many more model calls.
    const resumed = await SessionRecorder.resume({
      store,
      sessionId: SESSION,
      runId: RUN,
      actor: ACTOR,
    });
    const resumedCauses = new ToolCauses();
    if (resumed.replay) resumedCauses.load(resumed.replay);
    const matched = await resumed.beforeModelCall({ request: { messages: ["pay 5"] } });
    const again = await retryLive(resumed, matched, {});
    const answer = await resumed.modelCompleted(again, { toolCalls: [] });
    resumedCauses.noteStep(answer.eventId, again.stepId);
    for (let call = 0; call < 500; call++)
      await answered(resumed, resumedCauses, `turn ${call}`, `call-${call}`);

    // The recorded completion, and this process's answer of its step: nothing of the 500 after.
    expect(resumedCauses.kept.steps).toBe(2);
    expect(resumedCauses.sameTurn(answer.eventId, recorded.eventId)).toBe(true);
    const later = resumedCauses.causeOf(undefined, "call-0");
    expect(later).toBeDefined();
    expect(resumedCauses.sameTurn(later ?? "", recorded.eventId)).toBe(false);
    expect(resumedCauses.causeOf(undefined, "call-charge")).toBe(recorded.eventId);
  });
});
