import { type EventStore, SessionRecorder } from "@agent-ledger/core";
import { pausedInsideAgentCall } from "./session-fixture.test.data.js";
import { OPEN_WORK_PAGE } from "./viewer/open-work-page.js";

// Sessions as a crash, a pause or a finished run leave them: what `sessions --unresolved` and
// the viewer's page of sessions with something open are tested on.

export const actor = { type: "agent", id: "a" } as const;

/** A session whose run ended: nothing open. */
export async function finished(store: EventStore, sessionId: string) {
  const recorder = new SessionRecorder({ store, sessionId, actor });
  await recorder.startRun();
  const call = await recorder.beforeToolCall({ toolCallId: "c1", name: "lookup", args: {} });
  await recorder.toolCompleted(call, { found: true });
  await recorder.completeRun({ answer: "done" });
}

/** The ledger a process leaves when it dies with `calls` tool calls sent and none answered. */
export async function diedInFlight(store: EventStore, sessionId: string, calls: number) {
  const recorder = new SessionRecorder({ store, sessionId, actor });
  await recorder.startRun();
  await Promise.all(
    Array.from({ length: calls }, (_, index) =>
      recorder.beforeToolCall({ toolCallId: `c${index}`, name: "send_email", args: { index } }),
    ),
  );
}

/** A run started, with no call in flight: at work, or its process gone between two calls. */
export async function idle(store: EventStore, sessionId: string) {
  await new SessionRecorder({ store, sessionId, actor }).startRun();
}

/**
 * Sessions with something open, between finished ones: b-crashed (1 call in flight), c-idle (a
 * run open), d-paused (at an approval), e-crashed-twice (2 calls), then more finished sessions
 * than the viewer reads a request, then g-crashed-last (1 call).
 */
export async function crashesAmongFinished(store: EventStore): Promise<void> {
  await diedInFlight(store, "b-crashed", 1);
  await idle(store, "c-idle");
  await pausedInsideAgentCall(store, "d-paused");
  await diedInFlight(store, "e-crashed-twice", 2);
  for (let index = 0; index < OPEN_WORK_PAGE + 5; index++)
    await finished(store, `f-finished-${String(index).padStart(3, "0")}`);
  await diedInFlight(store, "g-crashed-last", 1);
}
