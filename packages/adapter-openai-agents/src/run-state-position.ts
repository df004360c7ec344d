import {
  hashJson,
  InvalidArgumentError,
  type JsonObject,
  type JsonValue,
  LedgerError,
  type LedgerEvent,
} from "@agent-ledger/core";
import type { RunState } from "@openai/agents";
import { isRunStateCheckpoint, type RunStateCheckpoint } from "./checkpoint.js";

// biome-ignore lint/suspicious/noExplicitAny: any context
type AnyRunState = RunState<any, any>;

/**
 * Where a serialized RunState stands in its run: its turn, agent, input, the model responses
 * and items it holds and the step it stopped at (its interruptions), hashed as canonical JSON
 * (`RunState.fromString` gives the same JSON in another key order). Not its context: that is
 * where the decisions a person makes on the state go (and the host's own context).
 */
export function runStatePosition(serialized: string): string {
  const json = JSON.parse(serialized) as JsonObject;
  const responses = Array.isArray(json.modelResponses) ? json.modelResponses : [];
  return hashJson({
    currentTurn: json.currentTurn ?? null,
    currentAgent: json.currentAgent ?? null,
    originalInput: json.originalInput ?? null,
    modelResponses: responses.map((response) => {
      const { output, responseId } = (response ?? {}) as JsonObject;
      return { output: output ?? null, responseId: responseId ?? null };
    }),
    generatedItems: json.generatedItems ?? null,
    currentStep: json.currentStep ?? null,
  } as JsonValue);
}

/**
 * Checks that `state`, given to resumeRun with a person's decisions, is the state run `runId`
 * is paused at: the one its latest interruption checkpoint holds (`rootEvents`: the run's own
 * events). Going on from any other would run again calls the ledger holds as done, or record
 * another run's calls on this one. An older state of this run (a request sent again) is
 * `conflict`; any other state `invalid-argument`; both at `$.state`, before anything runs.
 */
export function assertCurrentState(
  state: AnyRunState,
  rootEvents: readonly LedgerEvent[],
  runId: string,
): void {
  let position: string;
  try {
    position = runStatePosition(state.toString());
  } catch (error) {
    throw new LedgerError(
      "invalid-argument",
      `$.state: the RunState does not serialize (${(error as Error).message}): pass the state of an interrupted run`,
      { path: "$.state", cause: error },
    );
  }
  const paused = rootEvents.filter(
    (event) =>
      isRunStateCheckpoint(event) &&
      (event.payload as unknown as RunStateCheckpoint).kind === "interruption",
  );
  const latest = paused.at(-1);
  if (latest === undefined)
    throw new InvalidArgumentError(
      "$.state",
      `run ${runId} never paused at an approval: there is no state of it to decide on`,
    );
  const positionOf = (event: LedgerEvent) =>
    runStatePosition((event.payload as unknown as RunStateCheckpoint).state);
  if (positionOf(latest) === position) return;
  const older = paused.slice(0, -1).findLast((event) => positionOf(event) === position);
  if (older !== undefined)
    throw new LedgerError(
      "conflict",
      `$.state: run ${runId} has moved on since this RunState was saved (checkpoint at seq ${older.seq}; it is paused at the one at seq ${latest.seq}): going on from it would run again calls the ledger holds as done. A request sent again? Resume without state to load the latest one, and decide on it.`,
      { path: "$.state", details: { runId, stateSeq: older.seq, latestSeq: latest.seq } },
    );
  throw new InvalidArgumentError(
    "$.state",
    `this RunState is not one run ${runId} was paused at (another run's state?): nothing was run`,
  );
}
