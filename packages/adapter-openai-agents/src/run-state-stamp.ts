import type { JsonObject } from "@agent-ledger/core";
import type { RunState } from "@openai/agents";

// biome-ignore lint/suspicious/noExplicitAny: any context
type AnyRunState = RunState<any, any>;

/** The run a RunState was made for: its session and run ids. */
export interface RunOfState {
  sessionId: string;
  runId: string;
}

// Which run a state belongs to, and the checkpoint it was handed out at, are kept in the state
// itself, so that they go where the state goes (`toString`, `RunState.fromString`): as the
// approval records of tool names no tool has. The SDK keeps a record per tool name in the
// state's context and serializes it with the state; one with a NUL in its name is never looked
// up for a call. Two runs of the same agent on the same input, with a provider that gives no
// unique response ids, otherwise make states that nothing tells apart; so do two checkpoints of
// a run at the same position (the run paused again at a call that was in flight at a crash).
const RUN_RECORD = "\u0000agent-ledger run";
const CHECKPOINT_RECORD = "\u0000agent-ledger checkpoint";

interface ApprovalRecords {
  _mergeApprovals(records: Record<string, { approved: string[]; rejected: string[] }>): void;
}

function keyOf(run: RunOfState): string {
  return JSON.stringify([run.sessionId, run.runId]);
}

// Adds `key` to the record `name` of `state` (the SDK merges: keys already there stay, in order).
function addRecord(state: AnyRunState, name: string, key: string): void {
  const context = state._context as unknown as Partial<ApprovalRecords>;
  if (typeof context._mergeApprovals !== "function")
    throw new Error("@openai/agents changed: RunContext has no _mergeApprovals");
  context._mergeApprovals({ [name]: { approved: [key], rejected: [] } });
}

// The keys of the record `name` of a serialized state, in the order they were added.
function recordOf(json: JsonObject, name: string): string[] {
  const context = json.context as JsonObject | undefined;
  const approvals = context?.approvals as JsonObject | undefined;
  const record = approvals?.[name] as JsonObject | undefined;
  return Array.isArray(record?.approved) ? record.approved.map(String) : [];
}

/** Notes on `state` that it is `run`'s (kept when the state is serialized). */
export function stampRunState(state: AnyRunState, run: RunOfState): void {
  addRecord(state, RUN_RECORD, keyOf(run));
}

/**
 * Notes on `state` that it is handed out at the checkpoint `eventId` (the event that holds it,
 * or, polled, the one that holds the same state): the latest noted is the one it is at.
 */
export function stampCheckpoint(state: AnyRunState, eventId: string): void {
  addRecord(state, CHECKPOINT_RECORD, eventId);
}

/**
 * The eventId of the checkpoint a serialized state was handed out at: undefined for a state
 * written before states were stamped with it.
 */
export function checkpointOfState(json: JsonObject): string | undefined {
  return recordOf(json, CHECKPOINT_RECORD).at(-1);
}

/**
 * The runs a serialized state (`JSON.parse(state.toString())`) was stamped for: none for a
 * state written before states were stamped.
 */
export function runsOfState(json: JsonObject): RunOfState[] {
  return recordOf(json, RUN_RECORD).flatMap((key) => {
    try {
      const [sessionId, runId] = JSON.parse(key) as unknown[];
      return typeof sessionId === "string" && typeof runId === "string"
        ? [{ sessionId, runId }]
        : [];
    } catch {
      return [];
    }
  });
}
