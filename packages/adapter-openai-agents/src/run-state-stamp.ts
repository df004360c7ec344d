import type { JsonObject } from "@agent-ledger/core";
import type { RunState } from "@openai/agents";

// biome-ignore lint/suspicious/noExplicitAny: any context
type AnyRunState = RunState<any, any>;

/** The run a RunState was made for: its session and run ids. */
export interface RunOfState {
  sessionId: string;
  runId: string;
}

// Which run a state belongs to is kept in the state itself, so that it goes where the state goes
// (`toString`, `RunState.fromString`): as the approval record of a tool name no tool has. The
// SDK keeps a record per tool name in the state's context and serializes it with the state;
// one with a NUL in its name is never looked up for a call. Two runs of the same agent on the
// same input, with a provider that gives no unique response ids, otherwise make states that
// nothing tells apart.
const RUN_RECORD = "\u0000agent-ledger run";

interface ApprovalRecords {
  _mergeApprovals(records: Record<string, { approved: string[]; rejected: string[] }>): void;
}

function keyOf(run: RunOfState): string {
  return JSON.stringify([run.sessionId, run.runId]);
}

/** Notes on `state` that it is `run`'s (kept when the state is serialized). */
export function stampRunState(state: AnyRunState, run: RunOfState): void {
  const context = state._context as unknown as Partial<ApprovalRecords>;
  if (typeof context._mergeApprovals !== "function")
    throw new Error("@openai/agents changed: RunContext has no _mergeApprovals");
  context._mergeApprovals({ [RUN_RECORD]: { approved: [keyOf(run)], rejected: [] } });
}

/**
 * The runs a serialized state (`JSON.parse(state.toString())`) was stamped for: none for a
 * state written before states were stamped.
 */
export function runsOfState(json: JsonObject): RunOfState[] {
  const context = json.context as JsonObject | undefined;
  const approvals = context?.approvals as JsonObject | undefined;
  const record = approvals?.[RUN_RECORD] as JsonObject | undefined;
  const keys = Array.isArray(record?.approved) ? record.approved : [];
  return keys.flatMap((key) => {
    try {
      const [sessionId, runId] = JSON.parse(String(key)) as unknown[];
      return typeof sessionId === "string" && typeof runId === "string"
        ? [{ sessionId, runId }]
        : [];
    } catch {
      return [];
    }
  });
}
