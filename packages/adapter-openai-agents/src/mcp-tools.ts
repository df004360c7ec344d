import type { AnyAgent } from "./any-agent.js";
import { type LedgerToolOptions, ledgerTool } from "./ledger-tool.js";
import { assertMcpToolDeclaration } from "./option-checks.js";
import { mcpTools } from "./tool-effects.js";

/**
 * What the app says an MCP tool does, by the tool's name as the model sees it (prefixed with
 * its server's when the agent's `mcpConfig.includeServerInToolNames` is set): ledgerTool's
 * `effect` and `idempotent` for it, or undefined for the default (`effect: "unknown"`, not
 * idempotent). Only the name: the SDK hands the runner an agent's MCP tools as one list of
 * function tools that do not say which server made each, so the server is not known here.
 */
export type McpToolEffect = (tool: {
  name: string;
}) => Pick<LedgerToolOptions, "effect" | "idempotent"> | undefined;

/** The declaration each agent's MCP tools are wrapped with, as instrumentAgent was last given one. */
const declarations = new WeakMap<AnyAgent, McpToolEffect | undefined>();
/** The recording `getMcpTools` put on each agent, to tell it is still the one the SDK calls. */
const recordingMethods = new WeakMap<AnyAgent, AnyAgent["getMcpTools"]>();

/**
 * Has `agent` record the tools of its MCP servers: each time the SDK lists them (the runner
 * does at every turn, through `getAllTools`), every function tool made from them is wrapped
 * with ledgerTool, with what `mcpToolEffect` declares for it. The SDK makes these tools at run
 * time, new objects at each listing (a server's `cacheToolsList` keeps its list of MCP tools,
 * not the function tools made from it), so they are wrapped there, not once at instrumentation.
 * The agent's own method is replaced, `this` and what the SDK returns kept. A later call with
 * `mcpToolEffect` replaces the declaration, one without keeps it.
 *
 * MCP tool definitions may carry `annotations` (`readOnlyHint`, `idempotentHint`...), but the
 * MCP specification calls them hints from the server, not to be trusted: a server saying a
 * charge is idempotent would have it made twice. They are not read.
 */
export function recordMcpTools(agent: AnyAgent, mcpToolEffect: McpToolEffect | undefined): void {
  if (mcpToolEffect !== undefined || !declarations.has(agent))
    declarations.set(agent, mcpToolEffect);
  if (recordsMcpTools(agent)) return;
  const sdkGetMcpTools = agent.getMcpTools;
  const recording: AnyAgent["getMcpTools"] = async function (this: AnyAgent, ...args) {
    const tools = await sdkGetMcpTools.apply(this, args);
    const declare = declarations.get(agent);
    for (const tool of tools) {
      if (tool.type !== "function") continue;
      const declared = declare?.({ name: tool.name });
      assertMcpToolDeclaration(declared, tool.name);
      mcpTools.add(tool);
      ledgerTool(tool, declared ?? {});
    }
    return tools;
  };
  replaceMethod(agent, "getMcpTools", recording);
  recordingMethods.set(agent, recording);
}

/**
 * Puts `method` on `agent` in place of its `name` method, as an own property that is not
 * enumerable: `agent.clone()` copies an agent's own enumerable fields into the copy's config.
 */
export function replaceMethod<K extends "getMcpTools" | "clone">(
  agent: AnyAgent,
  name: K,
  method: AnyAgent[K],
): void {
  Object.defineProperty(agent, name, {
    value: method,
    configurable: true,
    writable: true,
    enumerable: false,
  });
}

/** Whether the SDK gets `agent`'s MCP tools through recordMcpTools (they are ledger tools). */
export function recordsMcpTools(agent: AnyAgent): boolean {
  const recording = recordingMethods.get(agent);
  return recording !== undefined && agent.getMcpTools === recording;
}

/** The declaration `agent`'s MCP tools are wrapped with, for a copy of it (`agent.clone()`). */
export function mcpToolEffectOf(agent: AnyAgent): McpToolEffect | undefined {
  return declarations.get(agent);
}
