import type { JsonValue } from "../events/json.js";
import { startedRun } from "../recorder/started-run.test.data.js";
import { exportedSpans } from "../testing/otel/exported-spans.js";

/**
 * A run of session "s" whose one model call sent `request` (and was answered): the store, the
 * id of the event that holds the request, and its chat span's gen_ai.input.messages as exported
 * with messages (the attribute's JSON text).
 */
export async function oneModelCall(request: JsonValue) {
  const { store, recorder } = await startedRun();
  const attempt = await recorder.beforeModelCall({ request });
  await recorder.modelCompleted(attempt, { text: "ok" });
  const spans = await exportedSpans(store, "s", { includeMessages: true });
  const chat = spans.find((span) => span.attributes["gen_ai.operation.name"] === "chat");
  const input = String(chat?.attributes["gen_ai.input.messages"]);
  return { store, requestedEventId: attempt.requestedEventId, input };
}
