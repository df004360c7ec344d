import { InvalidArgumentError } from "@agent-ledger/core";
import type { AnyAgent } from "./any-agent.js";
import { isClientToolSearch, recordToolSearch } from "./client-tool-search.js";
import { recordGuardrails } from "./guardrails.js";
import { isHandoffObject, ledgerHandoff } from "./ledger-handoff.js";
import { isLocalShell, ledgerLocalTool } from "./ledger-local-tool.js";
import { isLedgerWrapped, ledgerModel } from "./ledger-model.js";
import { ledgerTool } from "./ledger-tool.js";
import { watchLocalCallStarts } from "./local-call-ids.js";
import { type McpToolEffect, mcpToolEffectOf, recordMcpTools, replaceMethod } from "./mcp-tools.js";
import { assertInstrumentArguments } from "./option-checks.js";
import { watchAgentStart } from "./records-every-call.js";

export interface InstrumentAgentOptions {
  /**
   * Declares the effect of the agents' MCP tools (`mcpServers`), by tool name; a tool it says
   * nothing of is `{ effect: "unknown", idempotent: false }`. See `McpToolEffect`. Given, it
   * replaces what an earlier call declared for these agents; left out, that is kept.
   */
  mcpToolEffect?: McpToolEffect;
}

const cloning = new WeakSet<AnyAgent>();

// The SDK calls a computer's methods with the action's fields (`click(x, y, button)`), once or
// more per call, on a computer it may make per run: nothing says which call they belong to, so
// the ledger can neither record a call before it acts nor answer it on resume. Refused rather
// than run unseen, and run again after a crash.
function unrecordedComputer(agent: AnyAgent, toolName: string): InvalidArgumentError {
  return new InvalidArgumentError(
    "$.agent",
    `agent ${JSON.stringify(agent.name)} has computer tool ${JSON.stringify(toolName)}, which the ledger cannot record (the SDK hands a computer an action's fields, never its call): its actions would run unrecorded and again after a resume. Run that agent without the ledger, or give it function tools instead`,
  );
}

// A copy made with `agent.clone()` is a new agent, none of whose methods or listeners are the
// instrumented agent's: instrumented as it is made, with the same declaration. Else its MCP tools
// would run unseen on its first turn, listed before the runner's hook instruments it.
function instrumentClones(agent: AnyAgent): void {
  if (cloning.has(agent)) return;
  cloning.add(agent);
  const sdkClone = agent.clone;
  const clone: AnyAgent["clone"] = function (this: AnyAgent, config) {
    const copy = instrumentAgent(sdkClone.call(this, config));
    // Its own declaration only: the agents it hands off to keep theirs.
    recordMcpTools(copy, mcpToolEffectOf(agent));
    return copy;
  };
  replaceMethod(agent, "clone", clone);
}

/** The agents whose events the ledger listens to: each once, whichever instrumentAgent reached it. */
const listenedTo = new WeakSet<AnyAgent>();

/**
 * Prepares an agent graph for recording, in place: every function tool of the agent and of
 * every agent reachable through its handoffs is wrapped with ledgerTool (tools wrapped before,
 * e.g. with `{ idempotent: true }`, keep their options), every local shell and apply-patch tool
 * with ledgerLocalTool (`{ effect: "write", idempotent: false }` unless wrapped before), the
 * `execute` of a client tool search (`toolSearchTool({ execution: "client", execute })`) with
 * recordToolSearch (each search a recorded call), an agent with a computer tool is refused (`InvalidArgumentError`: its actions cannot be recorded), and
 * an agent whose `model` is a Model
 * instance gets it wrapped with ledgerModel. Every handoff object (`handoff(agent, {...})`) is
 * wrapped with ledgerHandoff, so its invocation (its `onHandoff` callback) is recorded as a call
 * and not run again on resume; a handoff given as a plain agent runs no code of its own and is
 * left as it is. A tool made by `Agent.asTool` is wrapped as having
 * no effect of its own and being safe to run again (see ledgerTool); the agent behind it is not
 * reachable from the graph: call instrumentAgent on it yourself. Each agent of the graph, run as
 * a tool, says on its child run whether it records every call it makes (`recordsEveryCall`).
 * The tools of each agent's MCP servers are wrapped with ledgerTool each time the SDK lists
 * them, with what `options.mcpToolEffect` declares (see recordMcpTools). A copy of an agent of
 * the graph made later with `agent.clone()` is instrumented as it is made.
 */
export function instrumentAgent(agent: AnyAgent, options: InstrumentAgentOptions = {}): AnyAgent {
  assertInstrumentArguments(agent, options);
  const seen = new Set<AnyAgent>();
  const pending: AnyAgent[] = [agent];
  while (pending.length > 0) {
    const current = pending.pop() as AnyAgent;
    if (seen.has(current)) continue;
    seen.add(current);
    if (!listenedTo.has(current)) {
      listenedTo.add(current);
      watchAgentStart(current);
      watchLocalCallStarts(current);
    }
    recordMcpTools(current, options.mcpToolEffect);
    instrumentClones(current);
    recordGuardrails(current);
    if (
      typeof current.model === "object" &&
      current.model !== null &&
      !isLedgerWrapped(current.model)
    )
      current.model = ledgerModel(current.model);
    for (const tool of current.tools ?? []) {
      if (tool.type === "function") ledgerTool(tool);
      else if (tool.type === "apply_patch" || (tool.type === "shell" && isLocalShell(tool)))
        ledgerLocalTool(tool);
      else if (tool.type === "computer") throw unrecordedComputer(current, tool.name);
      else if (tool.type === "hosted_tool" && isClientToolSearch(tool)) recordToolSearch(tool);
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
