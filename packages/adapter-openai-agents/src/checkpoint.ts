import {
  type AwaitedCallView,
  type JsonObject,
  LedgerError,
  type LedgerEvent,
  type SessionRecorder,
} from "@agent-ledger/core";
import { type Agent, RunState } from "@openai/agents";
import { stateLoadError } from "./agent-mismatch.js";
import { APPROVAL_EVENT_TYPE } from "./ledger-state.js";
import { assertLoadCheckpointArguments, assertSaveCheckpointArguments } from "./option-checks.js";
import { openAiAgentsVersion } from "./sdk-version.js";

/** `payload.format` of the checkpoints this adapter writes. */
export const RUN_STATE_CHECKPOINT_FORMAT = "openai-agents.run-state";

/**
 * A call a paused run waits on a person to decide, as a RunState checkpoint lists it: core's
 * `AwaitedCallView` (toolCallId: the SDK's callId, a hosted MCP approval's request id; args:
 * their JSON, else the text the model sent).
 */
export type AwaitedCall = AwaitedCallView;

/** Payload of a `checkpoint.saved` event holding a serialized RunState. */
export interface RunStateCheckpoint {
  format: typeof RUN_STATE_CHECKPOINT_FORMAT;
  /** `interruption`: paused for a tool approval; `final`: the run produced its final output. */
  kind: "interruption" | "final";
  /** Version of @openai/agents that wrote `state`: a RunState string only loads in the same version. */
  sdkVersion: string;
  /** The run (root or a handoff's child run) of the agent that was current. */
  currentRunId: string;
  currentAgent: string;
  /** `RunState.toString()`. */
  state: string;
  /**
   * The callIds of the interruptions on `state` that the ledger's replay rule approved, not a
   * person (absent when none): the process that goes on from this checkpoint records no
   * decision for them.
   */
  replayApprovals?: string[];
  /**
   * At an interruption, the calls still to decide and how (absent when none). The field's name
   * and shape are framework-neutral (`AWAITING_DECISION_FIELD` of @agent-ledger/core's
   * inspection): from it `inspectSession` reports the run as paused awaiting a decision
   * (`RunView.awaitingDecision`) until a call is made or decided in its tree (`endedBy`: the
   * decisions this adapter records, APPROVAL_EVENT_TYPE, count), and `agent-ledger inspect`
   * says to decide it with resumeRun instead of offering to abandon the agent tool calls the
   * pause keeps open.
   */
  awaitingDecision?: { calls: AwaitedCall[]; decideWith: string; endedBy: string[] };
}

/** How a person decides on a paused run, as `agent-ledger inspect` says it. */
const DECIDE_WITH =
  "resumeRun (approve or reject the interruption on result.state, then resumeRun with { state })";

export function isRunStateCheckpoint(event: LedgerEvent): boolean {
  const payload = event.payload as JsonObject | null;
  return (
    event.type === "checkpoint.saved" &&
    payload !== null &&
    typeof payload === "object" &&
    payload.format === RUN_STATE_CHECKPOINT_FORMAT
  );
}

/** What a RunState checkpoint says besides the state. */
export interface RunStateCheckpointOptions {
  kind: RunStateCheckpoint["kind"];
  currentRunId: string;
  replayApprovals?: readonly string[];
  awaitingDecision?: readonly AwaitedCall[];
}

/** The payload `saveRunStateCheckpoint` records for `state`. */
export function runStateCheckpoint(
  // biome-ignore lint/suspicious/noExplicitAny: any context / agent
  state: RunState<any, any>,
  options: RunStateCheckpointOptions,
): RunStateCheckpoint {
  const payload: RunStateCheckpoint = {
    format: RUN_STATE_CHECKPOINT_FORMAT,
    kind: options.kind,
    sdkVersion: openAiAgentsVersion(),
    currentRunId: options.currentRunId,
    currentAgent: String(state.currentAgent?.name ?? ""),
    state: state.toString(),
  };
  if (options.replayApprovals !== undefined && options.replayApprovals.length > 0)
    payload.replayApprovals = [...options.replayApprovals];
  if (options.awaitingDecision !== undefined && options.awaitingDecision.length > 0)
    payload.awaitingDecision = {
      calls: [...options.awaitingDecision],
      decideWith: DECIDE_WITH,
      endedBy: [APPROVAL_EVENT_TYPE],
    };
  return payload;
}

/** Saves `state.toString()` with the SDK version (at an interruption or at the end). */
export async function saveRunStateCheckpoint(
  recorder: SessionRecorder,
  // biome-ignore lint/suspicious/noExplicitAny: any context / agent
  state: RunState<any, any>,
  options: RunStateCheckpointOptions,
): Promise<LedgerEvent> {
  assertSaveCheckpointArguments(recorder, state, options);
  return recorder.checkpoint(runStateCheckpoint(state, options));
}

/**
 * Loads a RunState checkpoint with `RunState.fromString`. A state written by another version
 * of @openai/agents is refused up front (the SDK's string format is tied to its version in
 * both directions) with both versions in the message.
 */
export async function loadRunStateCheckpoint(
  // biome-ignore lint/suspicious/noExplicitAny: agents of any context and output type
  agent: Agent<any, any>,
  payload: RunStateCheckpoint,
  // biome-ignore lint/suspicious/noExplicitAny: any context and agent
): Promise<RunState<any, any>> {
  assertLoadCheckpointArguments(agent, payload);
  const installed = openAiAgentsVersion();
  if (payload.sdkVersion !== installed) {
    throw new LedgerError(
      "invalid-argument",
      `this checkpoint holds a RunState written by @openai/agents ${payload.sdkVersion}, but ${installed} is installed: a RunState string only loads in the version that wrote it. Resume with @openai/agents ${payload.sdkVersion}.`,
      { details: { recordedVersion: payload.sdkVersion, installedVersion: installed } },
    );
  }
  try {
    return await RunState.fromString(agent, payload.state);
  } catch (error) {
    throw stateLoadError("the RunState the run is paused at", installed, error);
  }
}
