import { SessionRecorder } from "../recorder/session-recorder.js";
import type { EventStore } from "../store/event-store.js";

/**
 * Records a session of `depth` runs, each the child run of the one before (`r1` of `r0`...),
 * started by its `hand_off` tool call, which is still in flight: a chain of handoffs that
 * crashed. Answers the root run's recorder (`r0`).
 */
export async function recordHandoffChain(
  store: EventStore,
  sessionId: string,
  depth: number,
): Promise<SessionRecorder> {
  const root = new SessionRecorder({
    store,
    sessionId,
    runId: "r0",
    actor: { type: "agent", id: "agent-0" },
  });
  let recorder = root;
  for (let index = 0; ; index++) {
    await recorder.startRun();
    const call = await recorder.beforeToolCall({
      toolCallId: `c${index}`,
      name: "hand_off",
      args: { to: index + 1 },
    });
    if (index === depth - 1) return root;
    recorder = recorder.child({
      runId: `r${index + 1}`,
      actor: { type: "agent", id: `agent-${index + 1}` },
      causedByEventId: call.requestedEventId,
    });
  }
}
