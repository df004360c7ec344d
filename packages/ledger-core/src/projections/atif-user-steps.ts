import type { JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import { atifMessageOf } from "./atif-content.js";
import type { AtifStep } from "./atif-types.js";
import { textOf } from "./extract.js";
import { type HistoryMessage, requestMessages } from "./request-messages.js";

// Where an ATIF trajectory's user steps come from: a run's input, or its model requests.

/** Whether two user messages say the same (blob markers, content-addressed, compare as such). */
function sameMessage(one: HistoryMessage | undefined, other: HistoryMessage | undefined): boolean {
  if (one === undefined || other === undefined) return false;
  return textOf(one.content) === textOf(other.content);
}

/**
 * The user messages a request adds to the conversation whose latest request's user messages
 * were `previous` (`UserConversations` picks it).
 * A request that re-sends the conversation adds those after it. A fresh history (another,
 * independent prompt) adds all of its own; a trimmed one (older turns dropped) those after the
 * previous request's last user message, when it holds it followed by the reply to it.
 */
function newUserMessages(
  messages: HistoryMessage[],
  users: HistoryMessage[],
  previous: HistoryMessage[],
): HistoryMessage[] {
  const count = previous.length;
  if (count === 0) return users;
  // A conversation that grows: the previous user messages are this one's first. Checked at
  // both ends only: comparing the whole history on every turn would make a long run quadratic
  // (an edit in the middle of a re-sent history adds no user message either).
  if (
    users.length >= count &&
    sameMessage(previous[0], users[0]) &&
    sameMessage(previous[count - 1], users[count - 1])
  )
    return users.slice(count);
  // Else the history changed: what follows the longest common prefix is new...
  let common = 0;
  while (common < Math.min(count, users.length) && sameMessage(previous[common], users[common]))
    common++;
  // ...but for a trimmed history's messages the previous request had: its last user message,
  // and the reply after it, are still there (a fresh history that repeats it ends with it).
  const last = previous[count - 1];
  for (let index = users.length - 1; index >= common; index--) {
    if (!sameMessage(last, users[index])) continue;
    if (users[index] !== messages[messages.length - 1]) return users.slice(index + 1);
    break;
  }
  return users.slice(common);
}

/**
 * The conversations a run's model requests carry, for `newUserMessages`: each by its first user
 * message (a side call with a prompt of its own, a classifier or a guard, is a conversation of
 * its own and does not make the main one's next request look fresh), and the last request's,
 * for a request that starts no known one (a trimmed window, or a new prompt).
 */
export class UserConversations {
  readonly #byFirst = new Map<string, HistoryMessage[]>();
  #last: HistoryMessage[] = [];

  /** The user messages `request` adds to its conversation, noting it as that one's latest. */
  added(request: JsonValue | undefined): HistoryMessage[] {
    const messages = requestMessages(request);
    const users = messages.filter((message) => message.role === "user");
    const first = users[0] === undefined ? undefined : textOf(users[0].content);
    const previous = (first === undefined ? undefined : this.#byFirst.get(first)) ?? this.#last;
    const added = newUserMessages(messages, users, previous);
    if (first !== undefined) this.#byFirst.set(first, users);
    this.#last = users;
    return added;
  }
}

/**
 * What the user said in a run's input: a text, or the contents of the user messages that end a
 * list of messages (the items before them are the conversation so far).
 */
export function userInputContents(input: JsonValue): JsonValue[] {
  if (typeof input === "string") return [input];
  const messages = Array.isArray(input) ? requestMessages(input) : [];
  const contents: JsonValue[] = [];
  for (let index = messages.length - 1; messages[index]?.role === "user"; index--)
    contents.unshift((messages[index] as HistoryMessage).content);
  return contents.length > 0 ? contents : [input];
}

/**
 * The user step saying `content`, recorded in `event` (its input, or the model request that
 * added it): its images as `atifMessageOf` shows them, those it cannot (and files named by a
 * provider's file id) in `extra.images_omitted` and `extra.files_omitted`.
 */
export function userStep(event: LedgerEvent, content: JsonValue): Omit<AtifStep, "step_id"> {
  const { message, extra } = atifMessageOf(content, event.eventId);
  return {
    timestamp: event.recordedAt,
    source: "user",
    message,
    ...(Object.keys(extra).length > 0 ? { extra } : {}),
  };
}
