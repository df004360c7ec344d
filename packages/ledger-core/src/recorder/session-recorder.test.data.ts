import type { Actor } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { SessionRecorder } from "./session-recorder.js";

export const actor: Actor = { type: "agent", id: "planner", framework: "test" };
export const request = { model: "fake-1", messages: [{ role: "user", content: "add 1 and 2" }] };

export function recorder(store: EventStore, runId = "run-1") {
  return new SessionRecorder({ store, sessionId: "session-1", runId, actor });
}

/** A new process's recorder on run-1, resumed from what the store holds. */
export function resume(store: EventStore, as: Actor = actor) {
  return SessionRecorder.resume({ store, sessionId: "session-1", runId: "run-1", actor: as });
}
