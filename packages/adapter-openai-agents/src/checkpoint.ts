import {
  type JsonObject,
  LedgerError,
  type LedgerEvent,
  type SessionRecorder,
} from "@agent-ledger/core";
import { type Agent, RunState } from "@openai/agents";
import { openAiAgentsVersion } from "./sdk-version.js";

/** `payload.format` of the checkpoints this adapter writes. */
export const RUN_STATE_CHECKPOINT_FORMAT = "openai-agents.run-state";

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
}

export function isRunStateCheckpoint(event: LedgerEvent): boolean {
  const payload = event.payload as JsonObject | null;
  return (
    event.type === "checkpoint.saved" &&
    payload !== null &&
    typeof payload === "object" &&
    payload.format === RUN_STATE_CHECKPOINT_FORMAT
  );
}

/** Saves `state.toString()` with the SDK version (at an interruption or at the end). */
export async function saveRunStateCheckpoint(
  recorder: SessionRecorder,
  // biome-ignore lint/suspicious/noExplicitAny: any context / agent
  state: RunState<any, any>,
  options: {
    kind: RunStateCheckpoint["kind"];
    currentRunId: string;
    replayApprovals?: readonly string[];
  },
): Promise<LedgerEvent> {
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
  return recorder.checkpoint(payload);
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
    throw new LedgerError(
      "invalid-argument",
      `the RunState checkpoint does not load in @openai/agents ${installed}: ${(error as Error).message}`,
      { cause: error },
    );
  }
}
