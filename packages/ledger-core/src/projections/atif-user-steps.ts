import type { JsonValue } from "../events/json.js";
import { type HistoryMessage, requestMessages, textOf } from "./extract.js";

// Where an ATIF trajectory's user steps come from: a run's input, or its model requests.

/** Whether two user messages say the same (blob markers, content-addressed, compare as such). */
function sameMessage(one: HistoryMessage | undefined, other: HistoryMessage | undefined): boolean {
  if (one === undefined || other === undefined) return false;
  return textOf(one.content) === textOf(other.content);
}

/**
 * The user messages a request adds to the conversation of the run's previous request, whose
 * user messages were `previous`; `users` are this request's, to pass as `previous` to the next.
 * A request that re-sends the conversation adds those after it. A fresh history (another,
 * independent prompt) adds all of its own; a trimmed one (older turns dropped) those after the
 * previous request's last user message, when it holds it followed by the reply to it.
 */
export function newUserMessages(
  request: JsonValue | undefined,
  previous: HistoryMessage[],
): { added: HistoryMessage[]; users: HistoryMessage[] } {
  const messages = requestMessages(request);
  const users = messages.filter((message) => message.role === "user");
  const count = previous.length;
  if (count === 0) return { added: users, users };
  // A conversation that grows: the previous user messages are this one's first. Checked at
  // both ends only: comparing the whole history on every turn would make a long run quadratic
  // (an edit in the middle of a re-sent history adds no user message either).
  if (
    users.length >= count &&
    sameMessage(previous[0], users[0]) &&
    sameMessage(previous[count - 1], users[count - 1])
  )
    return { added: users.slice(count), users };
  // Else the history changed: what follows the longest common prefix is new...
  let common = 0;
  while (common < Math.min(count, users.length) && sameMessage(previous[common], users[common]))
    common++;
  // ...but for a trimmed history's messages the previous request had: its last user message,
  // and the reply after it, are still there (a fresh history that repeats it ends with it).
  const last = previous[count - 1];
  for (let index = users.length - 1; index >= common; index--) {
    if (!sameMessage(last, users[index])) continue;
    if (users[index] !== messages[messages.length - 1])
      return { added: users.slice(index + 1), users };
    break;
  }
  return { added: users.slice(common), users };
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
