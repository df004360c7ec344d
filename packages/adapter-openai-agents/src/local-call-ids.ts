import type { AnyAgent } from "./any-agent.js";
import type { AnyRunState } from "./run-ends.js";

/** The methods of an apply-patch tool's editor, one per patch operation. */
export const EDITOR_METHODS = ["createFile", "updateFile", "deleteFile"] as const;

/**
 * The call id of each shell action and apply-patch operation the SDK is about to run, by the
 * object itself. The SDK hands a local shell only the action (`shell.run(action)`) and an editor
 * only the operation, never the call's id; it hands the same object to the tool's
 * `needsApproval` with the id, and it takes the object from the model response's call item (or,
 * going on from an interruption, from the RunState's last processed response). So the id is noted
 * at each of those, and read where the action runs. An agent used as a tool (Agent.asTool), going
 * on from its pause, runs from a RunState the SDK parses itself out of the outer one: none of
 * those objects is seen there, so the call is also noted as the SDK starts it (`agent_tool_start`,
 * see watchLocalCallStarts).
 */
const callIds = new WeakMap<object, string>();

/** Notes `callId` as the id of the call whose action (or operation) is `action`. */
export function noteLocalCall(action: unknown, callId: unknown): void {
  if (typeof action === "object" && action !== null && typeof callId === "string")
    callIds.set(action, callId);
}

/** The id of the call whose action (or operation) is `action`, if noted. */
export function localCallId(action: unknown): string | undefined {
  return typeof action === "object" && action !== null ? callIds.get(action) : undefined;
}

// The id the SDK keys a shell or apply-patch call by: its callId, else its id.
function keyOf(call: { callId?: unknown; id?: unknown }): unknown {
  return typeof call.callId === "string" ? call.callId : call.id;
}

/** Notes the shell and apply-patch calls of a model response's output items. */
export function noteLocalCalls(output: readonly unknown[]): void {
  for (const item of output) {
    const call = item as {
      type?: unknown;
      callId?: unknown;
      id?: unknown;
      action?: unknown;
      operation?: unknown;
    } | null;
    if (call?.type === "shell_call") noteLocalCall(call.action, keyOf(call));
    else if (call?.type === "apply_patch_call") noteLocalCall(call.operation, keyOf(call));
  }
}

/**
 * Notes the shell and apply-patch calls `state` is paused at (its last processed response):
 * going on from it, the SDK runs an approved one without asking its `needsApproval` again.
 */
export function noteStateLocalCalls(state: AnyRunState): void {
  const processed = state._lastProcessedResponse;
  for (const { toolCall } of processed?.shellActions ?? [])
    noteLocalCall(toolCall.action, keyOf(toolCall));
  for (const { toolCall } of processed?.applyPatchActions ?? [])
    noteLocalCall(toolCall.operation, keyOf(toolCall));
}

/**
 * Has `agent` note the id of each shell or apply-patch call it starts: the SDK emits
 * `agent_tool_start` on the agent with the call item (its id and the very action or operation it
 * hands the shell or editor), synchronously, just before it calls the shell or editor. This is
 * the one place the id is seen when an agent tool goes on from its pause. Once per agent
 * (instrumentAgent).
 */
export function watchLocalCallStarts(agent: AnyAgent): void {
  agent.on("agent_tool_start", (_context, _tool, details) => {
    const toolCall = (details as { toolCall?: unknown } | undefined)?.toolCall;
    if (toolCall !== undefined) noteLocalCalls([toolCall]);
  });
}
