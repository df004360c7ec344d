import type { Agent } from "@openai/agents";
import { isHandoffObject, ledgerHandoff } from "./ledger-handoff.js";
import { isLedgerWrapped, ledgerModel } from "./ledger-model.js";
import { ledgerTool } from "./ledger-tool.js";
import { watchAgentStart } from "./records-every-call.js";

// biome-ignore lint/suspicious/noExplicitAny: agents of any context and output type
type AnyAgent = Agent<any, any>;

/**
 * Prepares an agent graph for recording, in place: every function tool of the agent and of
 * every agent reachable through its handoffs is wrapped with ledgerTool (tools wrapped before,
 * e.g. with `{ idempotent: true }`, keep their options), and an agent whose `model` is a Model
 * instance gets it wrapped with ledgerModel. Every handoff object (`handoff(agent, {...})`) is
 * wrapped with ledgerHandoff, so its invocation (its `onHandoff` callback) is recorded as a call
 * and not run again on resume; a handoff given as a plain agent runs no code of its own and is
 * left as it is. A tool made by `Agent.asTool` is wrapped as having
 * no effect of its own and being safe to run again (see ledgerTool); the agent behind it is not
 * reachable from the graph: call instrumentAgent on it yourself. Each agent of the graph, run as
 * a tool, says on its child run whether it records every call it makes (`recordsEveryCall`).
 */
export function instrumentAgent(agent: AnyAgent): AnyAgent {
  const seen = new Set<AnyAgent>();
  const pending: AnyAgent[] = [agent];
  while (pending.length > 0) {
    const current = pending.pop() as AnyAgent;
    if (seen.has(current)) continue;
    seen.add(current);
    watchAgentStart(current);
    if (
      typeof current.model === "object" &&
      current.model !== null &&
      !isLedgerWrapped(current.model)
    )
      current.model = ledgerModel(current.model);
    for (const tool of current.tools ?? []) {
      if (tool.type === "function") ledgerTool(tool);
    }
    for (const entry of current.handoffs ?? []) {
      if (isHandoffObject(entry)) ledgerHandoff(entry);
      const target = (entry as { agent?: AnyAgent }).agent ?? entry;
      if (target && typeof target === "object" && "handoffs" in target)
        pending.push(target as AnyAgent);
    }
  }
  return agent;
}
