import type { JsonValue } from "../events/json.js";
import { SessionRecorder } from "../recorder/session-recorder.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";

/**
 * A run of session "s" whose one model call sent `request` (and was answered): the store, the
 * id of the event that holds the request, and its chat span's gen_ai.input.messages as exported
 * with messages (the attribute's JSON text).
 */
export async function oneModelCall(request: JsonValue) {
  const store = new MemoryEventStore();
  const recorder = new SessionRecorder({
    store,
    sessionId: "s",
    runId: "r",
    actor: { type: "agent", id: "a" },
  });
  await recorder.startRun();
  const attempt = await recorder.beforeModelCall({ request });
  await recorder.modelCompleted(attempt, { text: "ok" });
  const spans = await exportedSpans(store, "s", { includeMessages: true });
  const chat = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat");
  const input = String(chat?.attributes["gen_ai.input.messages"]);
  return { store, requestedEventId: attempt.requestedEventId, input };
}
