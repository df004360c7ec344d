import { EFFECT_IN_CHILD_RUNS_FIELD, type JsonObject, type ToolEffect } from "@agent-ledger/core";
import type { FunctionTool } from "@openai/agents";
import type { LedgerToolOptions } from "./ledger-tool.js";

// What each recorded tool declared it does to the world (its effect), and which tools' requests
// say more of themselves (an agent tool's effect is that of its child run; an MCP tool is an
// extension): kept by tool object, as the SDK keys its tools.

// biome-ignore lint/suspicious/noExplicitAny: FunctionTool's context/parameter generics are free here
export type AnyFunctionTool = FunctionTool<any, any, any>;

export const DEFAULT_EFFECT: ToolEffect = { kind: "unknown", idempotent: false };

const wrappedTools = new WeakMap<object, ToolEffect>();
/**
 * Agent tools with the default effect (not declared idempotent or not by the app): one in flight
 * at a crash runs again by itself only when its child run shows it safe (`safeAgentCalls`). Their
 * requests say so (`EFFECT_IN_CHILD_RUNS`), so inspection judges them as the resume does.
 */
export const defaultAgentEffect = new WeakSet<object>();

/** The metadata of a default agent tool's request: its effect is that of its child run. */
const EFFECT_IN_CHILD_RUNS: JsonObject = { [EFFECT_IN_CHILD_RUNS_FIELD]: true };

/**
 * The tools an agent's MCP servers gave (`recordMcpTools`): their requests say `toolType:
 * "extension"`, which the OpenTelemetry export gives as `gen_ai.tool.type` (a function tool's is
 * `function`).
 */
export const mcpTools = new WeakSet<object>();

/** The metadata of `tool`'s requests, if it has any. */
export function requestMetadata(tool: object): JsonObject | undefined {
  const metadata: JsonObject = {
    ...(defaultAgentEffect.has(tool) ? EFFECT_IN_CHILD_RUNS : {}),
    ...(mcpTools.has(tool) ? { toolType: "extension" } : {}),
  };
  return Object.keys(metadata).length > 0 ? metadata : undefined;
}

/**
 * The effect of an agent used as a tool (`Agent.asTool`) unless declared otherwise: it has none
 * of its own, and running it again is safe. What its agent does is recorded on the call's
 * child run, call by call, each with its tool's own effect; a call run again goes on on that
 * run, where the model responses and tool results it holds are answered from the ledger and a
 * call that was in flight is asked about as anywhere else. So after a crash inside it a person
 * is asked only about the inner call that was in flight, not about the agent tool call too.
 */
export const AGENT_TOOL_EFFECT: ToolEffect = { kind: "none", idempotent: true };

// A function tool made by Agent.asTool: @openai/agents 0.14.3 keeps the link to its agent to
// itself, but gives only these tools an `on` method (its stream events).
export function isAgentTool(tool: AnyFunctionTool): boolean {
  return typeof (tool as { on?: unknown }).on === "function";
}

/**
 * The effect a ledger tool declared, or undefined for a tool not wrapped by ledgerTool (or, a
 * shell or apply-patch tool, by ledgerLocalTool).
 */
export function ledgerToolEffect(tool: object): ToolEffect | undefined {
  return wrappedTools.get(tool);
}

/**
 * Notes `effect` as what `tool` declared (ledgerLocalTool's tools), or, already wrapped, refines
 * what `options` name of it; true when the tool was wrapped before.
 */
export function declareToolEffect(
  tool: object,
  effect: ToolEffect,
  options: Pick<LedgerToolOptions, "effect" | "idempotent">,
): boolean {
  const existing = wrappedTools.get(tool);
  if (!existing) {
    wrappedTools.set(tool, effect);
    return false;
  }
  if (options.idempotent !== undefined) existing.idempotent = options.idempotent;
  if (options.effect !== undefined) existing.kind = options.effect;
  return true;
}
