import type { JsonValue } from "../events/json.js";
import type { LedgerEvent } from "../events/types.js";
import type { DraftStep } from "./atif-draft-steps.js";
import { textOf } from "./extract.js";
import { requestMessages } from "./request-messages.js";

// Where an ATIF trajectory's system steps come from: the instructions of a run's model calls.

/** What `systemStep` reads: one model request of a run, and the instructions shown so far. */
export interface SystemStepOptions {
  request: JsonValue | undefined;
  /** The request's `model.requested` event. */
  event: LedgerEvent;
  /** The run's first `input.received`, if it recorded one. */
  firstInput: LedgerEvent | undefined;
  /** The system prompts the run's earlier model calls were given; `request`'s is added. */
  systemsShown: Set<string>;
}

/**
 * The system step of `request`'s instructions, unless an earlier call was given the same.
 * Each system prompt the run's model calls were given is shown once, where first given: a later
 * call with other instructions (a second conversation, a side call) is not shown the first's.
 */
export function systemStep(options: SystemStepOptions): DraftStep | undefined {
  const { request, event, firstInput, systemsShown } = options;
  const system = requestMessages(request)
    .filter((message) => message.role === "system")
    .map((message) => textOf(message.content))
    .join("\n");
  if (system.length === 0 || systemsShown.has(system)) return undefined;
  // The first instructions come first, as the model reads them: before the user's input
  // where the loop recorded that before its first call.
  const before =
    systemsShown.size === 0 &&
    firstInput !== undefined &&
    firstInput.commitCursor < event.commitCursor;
  systemsShown.add(system);
  return {
    at: (before ? firstInput.commitCursor : event.commitCursor) - 0.5,
    step: {
      timestamp: before ? firstInput.recordedAt : event.recordedAt,
      source: "system",
      message: system,
    },
    causes: [],
    resultsByCause: new Map(),
  };
}
