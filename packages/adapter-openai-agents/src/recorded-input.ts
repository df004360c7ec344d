import { type JsonValue, LedgerError } from "@agent-ledger/core";
import { type AgentInputItem, RunContext, RunState } from "@openai/agents";
import { stateLoadError } from "./agent-mismatch.js";
import type { AnyAgent } from "./any-agent.js";
import type { AnyRunState } from "./run-ends.js";
import { openAiAgentsVersion } from "./sdk-version.js";

/** What the SDK's run takes, and so what runWithLedger records as the run's input. */
export type RunInput = string | AgentInputItem[] | AnyRunState;

/**
 * The input a crashed run is re-executed from, as runWithLedger recorded it (`input.received`):
 * a string or input items as they are. A RunState (runWithLedger(agent, state), a run going on
 * from a plain SDK run's interruption) is recorded as its JSON, what its `toString()` writes, the
 * only kind of input that is a JSON object: loaded again with `RunState.fromString`, refused
 * (`invalid-argument`) if another @openai/agents version wrote it, since its string only loads in
 * that version. `context`, when the app gives one, replaces the JSON copy the state saved, as for
 * a checkpoint (the approvals on the state kept).
 */
export async function recordedRunInput(
  agent: AnyAgent,
  recorded: JsonValue | undefined,
  options: { sdkVersion: unknown; context: unknown },
): Promise<RunInput> {
  if (typeof recorded === "string" || Array.isArray(recorded))
    return recorded as string | AgentInputItem[];
  if (typeof recorded !== "object" || recorded === null)
    throw new LedgerError(
      "invalid-event",
      `the run's recorded input is neither a string, input items nor a RunState: ${JSON.stringify(recorded)}`,
    );
  const installed = openAiAgentsVersion();
  if (options.sdkVersion !== installed)
    throw new LedgerError(
      "invalid-argument",
      `this run went on from a RunState written by @openai/agents ${String(options.sdkVersion)}, but ${installed} is installed: a RunState string only loads in the version that wrote it. Resume with @openai/agents ${String(options.sdkVersion)}.`,
      { details: { recordedVersion: String(options.sdkVersion), installedVersion: installed } },
    );
  let state: AnyRunState;
  try {
    state = await RunState.fromString(agent, JSON.stringify(recorded));
  } catch (error) {
    throw stateLoadError("the RunState the run went on from", installed, error);
  }
  const { context } = options;
  if (context !== undefined)
    state._context.context = context instanceof RunContext ? context.context : context;
  return state;
}
