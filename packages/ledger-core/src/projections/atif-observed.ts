import type { JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
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

/** How many of the run's model requests after a call's outcome are searched for its answer. */
const REQUESTS_SEARCHED = 3;

/**
 * The text of the tool message answering `attempt`'s call (by its toolCallId) in the first
 * model request of `run` made after the attempt's outcome that carries it (among the next few:
 * the loop sends a call's answer with its next request, a side call's at most between);
 * undefined when none does (the run ended, or went on in another run).
 */
export function readByModel(run: RunRecord, attempt: AttemptRecord): string | undefined {
  const toolCallId = payloadOf(attempt.requested).toolCallId;
  const after = attempt.outcome?.commitCursor;
  if (typeof toolCallId !== "string" || after === undefined) return undefined;
  // The run's events are in commit order: start at the outcome's.
  let low = 0;
  let high = run.events.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((run.events[middle] as LedgerEvent).commitCursor < after) low = middle + 1;
    else high = middle;
  }
  let searched = 0;
  for (let index = low; index < run.events.length; index++) {
    const event = run.events[index] as LedgerEvent;
    if (event.type !== "model.requested") continue;
    if (searched++ === REQUESTS_SEARCHED) return undefined;
    const told = requestMessages(payloadOf(event).request).find(
      (message) => message.role === "tool" && message.toolCallId === toolCallId,
    );
    if (told) return toolText(told.content);
  }
  return undefined;
}
