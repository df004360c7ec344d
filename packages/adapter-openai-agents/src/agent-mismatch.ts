import { InvalidArgumentError, LedgerError, type LedgerEvent } from "@agent-ledger/core";
import type { AnyAgent } from "./any-agent.js";

// What a resume must be given, said wherever the agent given is not the run's.
const RESUME_WITH_THE_RUNS_GRAPH =
  "resume with the agent graph the run was recorded with (the same agents under the same names, with the same tools, handoffs and agents used as tools)";

// The SDK's words when a RunState names an agent, tool or handoff the agent graph given lacks
// (RunState.fromString in @openai/agents 0.14.3): "Tool charge not found", "Agent shop not found".
const MISSING_FROM_GRAPH =
  /^(Agent|Agent identity|Handoff|Tool|Computer tool|Shell tool|Apply patch tool|MCP tool) .+ not found$/;

/**
 * The error for a RunState of the run (`what`: the one it is paused at, or the one it went on
 * from) that `RunState.fromString` refused. When the SDK says the agent graph lacks an agent, a
 * tool or a handoff the state names, the agent given is not the run's: `$.agent`, said so, with
 * what to do. Otherwise (a state it cannot parse) the SDK's words as they are.
 */
export function stateLoadError(what: string, installed: string, error: unknown): LedgerError {
  const message = error instanceof Error ? error.message : String(error);
  if (MISSING_FROM_GRAPH.test(message))
    return new InvalidArgumentError(
      "$.agent",
      `the agent given does not match the one the run was recorded with: ${what} does not load with it (${message}); ${RESUME_WITH_THE_RUNS_GRAPH}`,
      { cause: error },
    );
  return new LedgerError(
    "invalid-argument",
    `${what} does not load in @openai/agents ${installed}: ${message}`,
    { cause: error },
  );
}

/**
 * Refuses, before anything is written, a resume of run `runId` given an agent whose name is not
 * the one that started the run (the root run's `run.started` actor): a renamed copy
 * (`agent.clone({ name })`) would record the run's calls under another agent and write a
 * checkpoint the original agent no longer loads. Only the starting agent counts: a run that
 * handed off goes on from its starting agent too (the handoff target's calls are on its child
 * run), and an agent used as a tool has a child run of its own, never resumed by itself.
 */
export function assertStartingAgent(
  agent: AnyAgent,
  runId: string,
  rootEvents: readonly LedgerEvent[],
): void {
  const started = rootEvents.find((event) => event.type === "run.started");
  const recorded = started?.actor?.id;
  if (recorded === undefined || recorded === agent.name) return;
  // An actor the adapter did not write (a run another adapter started) says nothing of agents.
  if (started?.actor?.framework !== "openai-agents") return;
  throw new InvalidArgumentError(
    "$.agent",
    `run ${runId} was started by agent ${JSON.stringify(recorded)}, and the agent given is ${JSON.stringify(agent.name)}: ${RESUME_WITH_THE_RUNS_GRAPH}`,
    { details: { recordedAgent: recorded, givenAgent: agent.name } },
  );
}
