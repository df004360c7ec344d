import type { Actor } from "../events/types.js";
import type { EventStore } from "../store/event-store.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

/**
 * A store (a new memory store by default) and a recorder of its started run `r` of session `s`,
 * as `actor` (an agent `a` by default).
 */
export async function startedRun<S extends EventStore = MemoryEventStore>(
  store: S = new MemoryEventStore() as EventStore as S,
  actor: Actor = { type: "agent", id: "a" },
) {
  const recorder = new SessionRecorder({ store, sessionId: "s", runId: "r", actor });
  await recorder.startRun();
  return { store, recorder };
}
