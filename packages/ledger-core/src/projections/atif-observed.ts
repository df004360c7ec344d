import type { JsonObject, JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import { atifMessageOf } from "./atif-content.js";
import type { AtifContentPart } from "./atif-types.js";
import { toolContentParts } from "./content-media.js";
import { isObject, textOf, toolResultOf } from "./extract.js";
import { requestMessagesNewestFirst } from "./request-messages.js";
import { type AttemptRecord, payloadOf, type RunRecord } from "./session-model.js";
import { modelOutputOf } from "./tool-model-output.js";

// What a model read of a tool call: each adapter tells the model in its own words (a failed or
// abandoned call's), or in the form it chose (the AI SDK's `toModelOutput`: images), in the
// next request it sends.

/**
 * A tool message's content as text: a tool output its framework wrapped for the model as what
 * it wraps (see `modelOutputOf`: a text as it is, a JSON value as its JSON, parts as their text).
 */
function toolText(content: JsonValue): string {
  const output = modelOutputOf(content);
  if (output === undefined) return textOf(content);
  if (output.kind === "parts") return textOf(output.parts);
  return typeof output.value === "string" ? output.value : JSON.stringify(output.value);
}

/** How many of the run's model requests after a call's outcome are searched for its answer. */
const REQUESTS_SEARCHED = 3;

/**
 * The tool message answering `attempt`'s call (by its toolCallId) in the first model request
 * of `run` made after the attempt's outcome that carries it (among the next few: the loop
 * sends a call's answer with its next request, a side call's at most between), with that
 * request; undefined when none does (the run ended, or went on in another run). The newest
 * such message: a provider that numbers its calls afresh each turn reuses their ids.
 */
function answerReadByModel(
  run: RunRecord,
  attempt: AttemptRecord,
): { content: JsonValue; requested: LedgerEvent } | undefined {
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
    for (const message of requestMessagesNewestFirst(payloadOf(event).request)) {
      if (message.role === "tool" && message.toolCallId === toolCallId)
        return { content: message.content, requested: event };
      // The answer comes after the message asking for the call: not in this request.
      if (message.toolCalls?.some((call) => call.id === toolCallId)) break;
    }
  }
  return undefined;
}

/**
 * The text of the tool message answering `attempt`'s call in the run's next requests (see
 * `answerReadByModel`); undefined when none carries it.
 */
export function readByModel(run: RunRecord, attempt: AttemptRecord): string | undefined {
  const answer = answerReadByModel(run, attempt);
  return answer === undefined ? undefined : toolText(answer.content);
}

/**
 * A completed tool call's result as ATIF content parts, when it holds images or other files or
 * names files by a provider's file id: what the model read of it (the tool message answering
 * it in the run's next requests: the AI SDK's `toModelOutput` content, a LangChain
 * ToolMessage's parts), else, when no request carries it (the run ended there), the recorded
 * result (MCP's `{ content }`, a list of parts, an OpenAI Agents file or image output). Its
 * images and files as `atifMessageOf` shows them: one recorded as bytes is named, with the
 * event that holds them, in `extra` (`images_omitted`, `files_omitted`), never copied.
 * Undefined when it holds neither: the result is text.
 */
export function mediaObserved(
  run: RunRecord,
  attempt: AttemptRecord,
): { content: AtifContentPart[]; extra: JsonObject } | undefined {
  const answer = answerReadByModel(run, attempt);
  const holder = answer?.requested ?? attempt.outcome;
  if (holder === undefined) return undefined;
  const given = answer ? answer.content : toolResultOf(payloadOf(attempt.outcome).result);
  const parts = toolContentParts(given);
  // Parts only: a list of other values (a search's results) is a JSON result, shown as text.
  if (!parts?.every((part) => isObject(part) && typeof part.type === "string")) return undefined;
  const { message, extra } = atifMessageOf(parts, holder.eventId);
  return typeof message === "string" ? undefined : { content: message, extra };
}
