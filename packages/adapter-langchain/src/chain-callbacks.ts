import type { Serialized } from "@langchain/core/load/serializable";
import type { HandlerState } from "./handler-state.js";

// What LedgerCallbackHandler does on LangChain's chain callbacks.

/** What LangChain's `handleChainStart` gives, by name (its run name resolved). */
export interface ChainStart {
  chain: Serialized;
  inputs: unknown;
  runId: string;
  parentRunId: string | undefined;
  tags: string[] | undefined;
  metadata: Record<string, unknown> | undefined;
  name: string;
}

/**
 * A chain started. Every chain, recorded or not, is noted: a tool may reach a tool or a model
 * through it, a LangGraph node's may pause at `interrupt()`, and createAgent's model node makes
 * retries. Unless `recordChains: false`, it is recorded as an `x.langchain.chain.started`.
 */
export async function chainStarted(state: HandlerState, start: ChainStart): Promise<void> {
  const { chain, inputs, runId, parentRunId, tags, metadata, name } = start;
  state.runs.started(runId, parentRunId);
  state.pauses.chainStarted(runId, metadata);
  state.models.chainStarted(runId, name, metadata, parentRunId, chain);
  if (!recordsChains(state)) return;
  // Inside a tool call, in that call's run (its subgraph's).
  const insideTool = state.runs.enclosingTool(parentRunId);
  const root = state.runs.rootOf(runId);
  const recorded = { name, inputs, runId, parentRunId, tags, metadata, insideTool, root };
  await state.chains.started(recorded);
}

/** LangChain's chain run `runId` returned `outputs`. */
export async function chainCompleted(
  state: HandlerState,
  end: { outputs: unknown; runId: string; parentRunId: string | undefined },
): Promise<void> {
  const { outputs, runId, parentRunId } = end;
  await state.models.chainCompleted(outputs, runId);
  await chainEnded(state, runId);
  await state.chains.completed(outputs, runId, parentRunId);
}

/** LangChain's chain run `runId` threw `error`. */
export async function chainFailed(
  state: HandlerState,
  end: { error: unknown; runId: string; parentRunId: string | undefined },
): Promise<void> {
  const { error, runId, parentRunId } = end;
  await chainEnded(state, runId);
  await state.chains.failed(error, runId, parentRunId);
}

/** A chain ended: what ran under it is over (streams left unfinished, retries). */
async function chainEnded(state: HandlerState, runId: string): Promise<void> {
  state.models.parentEnded(runId);
  await state.models.closeUnder(runId);
  state.runs.ended(runId);
}

function recordsChains(state: HandlerState): boolean {
  return state.options.recordChains ?? true;
}
