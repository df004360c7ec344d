import type { JsonValue } from "../events/json.js";
import { isObject, requestMessages, textOf } from "./extract.js";
import { type AttemptRecord, payloadOf, type RunRecord } from "./session-model.js";

// What a model read of a tool call that gave no result of its own (failed, or abandoned by a
// person): each adapter tells the model in its own words, in the next request it sends.

/** A tool message's content as text (the AI SDK's `{ type: "text" | "error-text" | "json", value }` too). */
function toolText(content: JsonValue): string {
  if (isObject(content) && typeof content.type === "string" && "value" in content) {
    const value = content.value ?? null;
    return typeof value === "string" ? value : JSON.stringify(value);
  }
  return textOf(content);
}

/**
 * The text of the tool message answering `attempt`'s call (by its toolCallId) in the first
 * model request of `run` made after the attempt's outcome; undefined when none carries it.
 */
export function readByModel(run: RunRecord, attempt: AttemptRecord): string | undefined {
  const toolCallId = payloadOf(attempt.requested).toolCallId;
  const after = attempt.outcome?.commitCursor;
  if (typeof toolCallId !== "string" || after === undefined) return undefined;
  for (const event of run.events) {
    if (event.type !== "model.requested" || event.commitCursor < after) continue;
    const told = requestMessages(payloadOf(event).request).find(
      (message) => message.role === "tool" && message.toolCallId === toolCallId,
    );
    if (told) return toolText(told.content);
  }
  return undefined;
}
