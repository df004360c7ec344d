import type { JsonValue } from "../events/json.js";
import type { SessionRecorder } from "../recorder/session-recorder.js";
import { startedRun } from "../recorder/started-run.test.data.js";
import { MemoryEventStore } from "../store/memory-store.js";
import { toAtif } from "./to-atif.js";

// A run whose one tool call gives a result, for the tests of what ATIF shows of it.

export const actor = { type: "agent", id: "a" } as const;
export const ask = { role: "user", content: "look" };
export const asked = { role: "assistant", content: "", tool_calls: [{ id: "t1", name: "look" }] };

/**
 * A run whose model asked for tool call t1, which has started: its store, recorder and call.
 * The run's actor is of `framework`, if given.
 */
export async function lookStarted(framework?: string) {
  const { store, recorder } = await startedRun(
    new MemoryEventStore(),
    framework === undefined ? actor : { ...actor, framework },
  );
  const first = await recorder.beforeModelCall({ request: { model: "m", messages: [ask] } });
  await recorder.modelCompleted(first, { toolCalls: [{ id: "t1", name: "look", args: {} }] });
  const tool = await recorder.beforeToolCall({ toolCallId: "t1", name: "look", args: {} });
  return { store, recorder, tool };
}

/**
 * The next model call of a run lookStarted began, its request giving the model `toolMessage`
 * after t1's call; returns the id of the event that holds the request.
 */
export async function lookedAgain(
  { store, recorder }: { store: MemoryEventStore; recorder: SessionRecorder },
  toolMessage: JsonValue,
) {
  const messages = [ask, asked, toolMessage];
  const next = await recorder.beforeModelCall({ request: { model: "m", messages } });
  const request = (await store.readRun({ sessionId: "s", runId: "r" })).events.at(-1)?.eventId;
  await recorder.modelCompleted(next, { text: "seen" });
  return request;
}

/**
 * A run whose model asks for tool call t1, which returns `result`; then, if `toolMessage` is
 * given, a next model call whose request gives the model that tool message. The run's actor is
 * of `framework`, if given. Returns the store and the ids of the events that hold the result
 * and the next request.
 */
export async function lookRun(result: JsonValue, toolMessage?: JsonValue, framework?: string) {
  const started = await lookStarted(framework);
  const completed = await started.recorder.toolCompleted(started.tool, result);
  const nextRequest =
    toolMessage === undefined ? undefined : await lookedAgain(started, toolMessage);
  return { store: started.store, completed: completed.eventId, nextRequest };
}

export const observed = async (store: MemoryEventStore) =>
  (await toAtif(store, "s")).steps.find((step) => step.tool_calls)?.observation?.results[0];
