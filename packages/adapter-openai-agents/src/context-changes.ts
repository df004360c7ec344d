import {
  type Attempt,
  type JsonObject,
  type JsonValue,
  type LedgerEvent,
  NonSerializableError,
  type SessionRecorder,
} from "@agent-ledger/core";
import type { LedgerRunState } from "./scope.js";

/**
 * Type of the custom event recording what a call (a function tool's, an agent tool's, a
 * handoff's, an editor's) changed in the run's context (`runContext.context`): committed before
 * the call's outcome, with its attempt, so a call the ledger answers on resume gives the context
 * what the call wrote, where a live call would have written it.
 */
export const CONTEXT_CHANGED_EVENT_TYPE = "x.openai-agents.context";

/** What a call changed in the context, by top-level key: keys set, with their JSON, and keys deleted. */
export interface ContextChange {
  set: JsonObject;
  deleted: string[];
}

/** The context a call runs with, and the JSON text of each of its top-level keys before it. */
export interface ContextWatch {
  context: Record<string, unknown>;
  before: Map<string, string>;
}

type ContextObject = Record<string, unknown>;

function isContextObject(context: unknown): context is ContextObject {
  return typeof context === "object" && context !== null && !Array.isArray(context);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function keyPath(key: string): string {
  return IDENTIFIER.test(key) ? `$.context.${key}` : `$.context[${JSON.stringify(key)}]`;
}

// The JSON text of each top-level key, as the SDK's RunState writes the context (a value with a
// toJSON by what it returns); a key whose value JSON leaves out (undefined, a function) is absent.
function textsOf(context: ContextObject): Map<string, string> {
  const texts = new Map<string, string>();
  for (const key of Object.keys(context)) {
    let text: string | undefined;
    try {
      text = JSON.stringify(context[key]);
    } catch (error) {
      throw new NonSerializableError(
        keyPath(key),
        `a value JSON cannot write (${error instanceof Error ? error.message.split("\n")[0] : String(error)})`,
      );
    }
    if (text !== undefined) texts.set(key, text);
  }
  return texts;
}

/**
 * Notes the context before a recorded call runs, or undefined when there is nothing to watch:
 * a context that is not an object (none given, a string) has no keys a call could set.
 */
export function watchContext(context: unknown): ContextWatch | undefined {
  if (!isContextObject(context)) return undefined;
  return { context, before: textsOf(context) };
}

/** What changed in the watched context since `watchContext`, or undefined if nothing did. */
export function contextChange(watch: ContextWatch | undefined): ContextChange | undefined {
  if (watch === undefined) return undefined;
  const after = textsOf(watch.context);
  const set: JsonObject = {};
  let changed = false;
  for (const [key, text] of after) {
    if (watch.before.get(key) === text) continue;
    set[key] = JSON.parse(text) as JsonValue;
    changed = true;
  }
  const deleted = [...watch.before.keys()].filter((key) => !after.has(key));
  return changed || deleted.length > 0 ? { set, deleted } : undefined;
}

/**
 * Records what the call of `attempt` changed in the watched context, if anything, before the
 * caller records the call's outcome: a crash between the two leaves the call in flight, never
 * answered from the ledger without its change. The payload goes through the recorder's
 * redaction like any other.
 */
export async function recordContextChange(
  recorder: SessionRecorder,
  attempt: Attempt,
  watch: ContextWatch | undefined,
): Promise<void> {
  const change = contextChange(watch);
  if (change === undefined) return;
  await recorder.record({
    type: CONTEXT_CHANGED_EVENT_TYPE,
    stepId: attempt.stepId,
    attemptId: attempt.attemptId,
    causedByEventId: attempt.requestedEventId,
    payload: {
      ...(attempt.toolCallId !== undefined ? { toolCallId: attempt.toolCallId } : {}),
      set: change.set,
      deleted: change.deleted,
    },
  });
}

/**
 * The change a recorded `x.openai-agents.context` payload holds. A redaction may have taken
 * parts of it out: what is left of `set` and `deleted` is kept, anything else is ignored.
 */
export function recordedContextChange(payload: unknown): ContextChange | undefined {
  if (!isContextObject(payload)) return undefined;
  const set = isContextObject(payload.set) ? (payload.set as JsonObject) : {};
  const deleted = Array.isArray(payload.deleted)
    ? payload.deleted.filter((key): key is string => typeof key === "string")
    : [];
  return { set, deleted };
}

/**
 * Gives the context what the recorded call `attemptId` changed in it when it ran (keys set to
 * their recorded JSON, keys deleted), as the call answered from the ledger does not run. Keys it
 * did not change keep their values, and their identity.
 */
export function applyContextChange(
  run: LedgerRunState | undefined,
  attemptId: string,
  context: unknown,
): void {
  const change = run?.contextChanges.get(attemptId);
  if (change === undefined || !isContextObject(context)) return;
  applyChange(change, context);
}

/**
 * Gives `context` every change the recorded calls among `events` made to the run's context, in
 * the order they were recorded: a run that goes on from a RunState checkpoint with a context of
 * the app's own (not the JSON copy the state saved) gets what the calls before the checkpoint
 * wrote, as a re-executed run gets it call by call. A change whose call has no outcome (in flight
 * at a crash, or abandoned) is left out: the ledger does not take that call for made.
 */
export function applyRecordedContextChanges(
  events: readonly LedgerEvent[],
  context: unknown,
): void {
  if (!isContextObject(context)) return;
  const made = new Set<string>();
  for (const event of events)
    if (
      (event.type === "tool.completed" || event.type === "tool.failed") &&
      event.attemptId !== undefined
    )
      made.add(event.attemptId);
  for (const event of events) {
    if (event.type !== CONTEXT_CHANGED_EVENT_TYPE || event.attemptId === undefined) continue;
    if (!made.has(event.attemptId)) continue;
    const change = recordedContextChange(event.payload);
    if (change) applyChange(change, context);
  }
}

function applyChange(change: ContextChange, context: ContextObject): void {
  // A copy: a later call that changes a nested value must not change what the ledger answered.
  for (const [key, value] of Object.entries(change.set)) context[key] = structuredClone(value);
  for (const key of change.deleted) delete context[key];
}
