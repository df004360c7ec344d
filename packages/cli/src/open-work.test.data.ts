import { type EventStore, SessionRecorder } from "@agent-ledger/core";

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
