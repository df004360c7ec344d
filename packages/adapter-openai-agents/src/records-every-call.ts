import type { AnyAgent } from "./any-agent.js";
import { searchesRecorded } from "./client-tool-search.js";
import { isHandoffObject, ledgerHandoffEffect } from "./ledger-handoff.js";
import { isLocalShell } from "./ledger-local-tool.js";
import { recordsMcpTools } from "./mcp-tools.js";
import { currentScope } from "./scope.js";
import { ledgerToolEffect } from "./tool-effects.js";

/**
 * Whether a run of `agent` records every call it makes, each before it is made: every tool of
 * the agent and of each agent its handoffs reach is a ledger tool (`ledgerTool`, as
 * `instrumentAgent` makes them) or a hosted tool (the provider runs it inside a model call),
 * every handoff object among its handoffs is a ledger handoff (`ledgerHandoff`: its `onHandoff`
 * callback is recorded as a call; a handoff given as a plain agent runs nothing of its own), and
 * each that has MCP servers gets their tools recorded (`instrumentAgent` makes the agent wrap
 * them with ledgerTool as the SDK lists them: they are made at run time). A local shell or
 * apply-patch tool counts when wrapped by ledgerLocalTool, a client tool search with an `execute`
 * when instrumentAgent made it record its searches. A plain function, shell or apply-patch
 * tool, a computer tool, a handoff object not wrapped, the MCP tools of an agent not instrumented
 * run unseen. Read when the agent starts, so a tool or handoff added after
 * `instrumentAgent` counts.
 */
export function recordsEveryCall(agent: AnyAgent): boolean {
  const seen = new Set<AnyAgent>();
  const pending: AnyAgent[] = [agent];
  for (let current = pending.pop(); current !== undefined; current = pending.pop()) {
    if (seen.has(current)) continue;
    seen.add(current);
    if ((current.mcpServers?.length ?? 0) > 0 && !recordsMcpTools(current)) return false;
    for (const tool of current.tools ?? []) {
      // A hosted tool, or a hosted shell: the provider runs it inside a recorded model call;
      // but a client tool search's `execute` runs here, recorded only once instrumented.
      if (tool.type === "hosted_tool") {
        if (!searchesRecorded(tool)) return false;
        continue;
      }
      if (tool.type === "shell" && !isLocalShell(tool)) continue;
      const recordable =
        tool.type === "function" || tool.type === "shell" || tool.type === "apply_patch";
      if (!recordable || ledgerToolEffect(tool) === undefined) return false;
    }
    for (const entry of current.handoffs ?? []) {
      if (isHandoffObject(entry) && ledgerHandoffEffect(entry) === undefined) return false;
      const target = (entry as { agent?: AnyAgent }).agent ?? entry;
      if (target && typeof target === "object" && "handoffs" in target)
        pending.push(target as AnyAgent);
    }
  }
  return true;
}

/**
 * Has `agent` tell the ledger, when it starts as an agent used as a tool (Agent.asTool),
 * whether it records every call (`recordsEveryCall`): the child run of that tool call says so
 * when it starts. A tool made by Agent.asTool does not say which agent it runs; the SDK's
 * `agent_start` does, emitted (synchronously, in the tool call's scope) before the agent's
 * first model call, so before its child run is opened. Once per agent (instrumentAgent).
 */
export function watchAgentStart(agent: AnyAgent): void {
  agent.on("agent_start", (_context, started) => {
    const scope = currentScope();
    // An agent tool's scope whose child run is not open yet: the agent the call runs.
    if (scope?.parent === undefined || scope.current !== undefined) return;
    scope.recordsEveryCall ??= recordsEveryCall(started as AnyAgent);
  });
}
