import type { JsonObject, JsonValue } from "../events/json.js";
import type { AtifStep } from "./atif-types.js";
import { userInputContents, userStep } from "./atif-user-steps.js";
import { isObject } from "./extract.js";
import { payloadOf, type RunRecord } from "./session-model.js";

// How an ATIF trajectory shows a run's start and end where its steps cannot: the one step of
// a run that recorded nothing else, and the run's result fit to share.

/** A failure's error as one line (`Name: message`). */
export function errorText(payload: JsonObject): string {
  const error = payload.error;
  if (isObject(error)) return `${error.name ?? "Error"}: ${error.message ?? ""}`;
  if (error === undefined || error === null) return "failed";
  return typeof error === "string" ? error : JSON.stringify(error);
}

/**
 * The steps of a run that recorded no input, call or sub-agent (it crashed or ended first):
 * ATIF requires at least one. The user's input if its start carried one, else a system step
 * saying how the run went.
 */
export function startSteps(run: RunRecord): Omit<AtifStep, "step_id">[] {
  const started = run.started ?? run.events[0];
  const timestamp = started?.recordedAt ?? "";
  const extra: JsonObject = { run_id: run.runId };
  if (started) extra.event_id = started.eventId;
  const input = payloadOf(run.started).input;
  if (input !== undefined && input !== null && started !== undefined)
    return userInputContents(input).map((content) => {
      const step = userStep(started, content);
      return { ...step, extra: { ...extra, ...step.extra } };
    });
  const terminal = run.terminal;
  let message = "Run started; no input, agent turn or tool call recorded.";
  if (terminal?.type === "run.failed")
    message = `Run failed before any input, agent turn or tool call: ${errorText(payloadOf(terminal))}`;
  else if (terminal)
    message = `Run ${terminal.type.slice(4)} before any input, agent turn or tool call.`;
  return [{ timestamp, source: "system", message, extra }];
}

/**
 * A run's result without the stacks of its error and the error's causes: they hold local file
 * paths (the OTel export's exception events leave them out too).
 */
export function withoutStacks(result: JsonValue): JsonValue {
  if (!isObject(result) || result.error === undefined) return result;
  return { ...result, error: errorWithoutStack(result.error) };
}

function errorWithoutStack(error: JsonValue): JsonValue {
  if (!isObject(error)) return error;
  const { stack: _stack, ...rest } = error;
  return rest.cause === undefined ? rest : { ...rest, cause: errorWithoutStack(rest.cause) };
}
