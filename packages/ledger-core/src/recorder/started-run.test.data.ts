import { MemoryEventStore } from "../store/memory-store.js";
import { SessionRecorder } from "./session-recorder.js";

/** A memory store and a recorder of its started run `r` of session `s`, as an agent `a`. */
export async function startedRun() {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  return { store, recorder };
}
