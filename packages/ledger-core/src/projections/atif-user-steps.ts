import type { JsonValue } from "../events/json.js";
import { type HistoryMessage, requestMessages, textOf } from "./extract.js";

// Where an ATIF trajectory's user steps come from: a run's input, or its model requests.

/**
 * The user messages a request adds to a conversation. Each request re-sends the conversation,
 * so the first `seen` user messages (those of the run's earlier requests) are not new.
 */
export function newUserMessages(
  request: JsonValue | undefined,
  seen: number,
): { messages: HistoryMessage[]; seen: number } {
  const users = requestMessages(request).filter((message) => message.role === "user");
  return {
    messages: users.slice(Math.min(seen, users.length)),
    seen: Math.max(seen, users.length),
  };
}

/**
 * What the user said in a run's input: a text, or the user messages that end a list of
 * messages (the items before them are the conversation so far).
 */
export function userInputTexts(input: JsonValue): string[] {
  if (typeof input === "string") return [input];
  const messages = Array.isArray(input) ? requestMessages(input) : [];
  const texts: string[] = [];
  for (let index = messages.length - 1; messages[index]?.role === "user"; index--)
    texts.unshift(textOf(messages[index]?.content));
  return texts.length > 0 ? texts : [textOf(input)];
}
