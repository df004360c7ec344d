import { childPath, type JsonValue } from "../events/json.js";

/** Where two JSON values first differ, and the two values there. */
export interface JsonDifference {
  /** JSONPath-like (`$.messages[0].content`), as the validation errors name a place. */
  path: string;
  /** The value there in the first (the recorded one); undefined where it has none. */
  recorded: JsonValue | undefined;
  /** The value there in the second (the call made now); undefined where it has none. */
  now: JsonValue | undefined;
}

const isObject = (value: JsonValue | undefined): value is { [key: string]: JsonValue } =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The first place, depth first in the recorded value's key order (then the keys only the new
 * one has), where `recorded` and `now` differ; undefined when they are equal. For a replay
 * divergence to say what changed (a system prompt with the time in it), not only that
 * something did.
 */
export function firstDifference(
  recorded: JsonValue | undefined,
  now: JsonValue | undefined,
  path = "$",
): JsonDifference | undefined {
  if (recorded === now) return undefined;
  if (Array.isArray(recorded) && Array.isArray(now)) {
    const length = Math.max(recorded.length, now.length);
    for (let index = 0; index < length; index++) {
      const found = firstDifference(recorded[index], now[index], childPath(path, index));
      if (found) return found;
    }
    return undefined;
  }
  if (isObject(recorded) && isObject(now)) {
    for (const key of Object.keys(recorded)) {
      const found = firstDifference(
        recorded[key],
        Object.hasOwn(now, key) ? now[key] : undefined,
        childPath(path, key),
      );
      if (found) return found;
    }
    for (const key of Object.keys(now))
      if (!Object.hasOwn(recorded, key))
        return { path: childPath(path, key), recorded: undefined, now: now[key] };
    return undefined;
  }
  return { path, recorded, now };
}

/** A value as a divergence message shows it: JSON, cut to `max` characters. */
export function shortJson(value: JsonValue | undefined, max = 80): string {
  if (value === undefined) return "(none)";
  const text = JSON.stringify(value);
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * What a divergence message says after "differs from the one recorded at seq N": where the two
 * differ, when the recorded value is at hand (`difference` undefined: "" for that part), then
 * why and what to do. `what` names the value built anew on a re-execution ("A request").
 */
export function divergenceText(difference: JsonDifference | undefined, what: string): string {
  const where = difference
    ? ` (first difference at ${difference.path}: recorded ${shortJson(difference.recorded)}, now ${shortJson(difference.now)})`
    : "";
  return `${where}: the agent is not re-executing the same run. ${what} built from something that changes between runs (the time, a random id) cannot be answered from the ledger: make it the same on a re-execution. If the difference is meant (a new prompt, a deploy since the run began), this run cannot go on with it: close it (recorder.failRun or recorder.cancelRun) and start a new run`;
}
