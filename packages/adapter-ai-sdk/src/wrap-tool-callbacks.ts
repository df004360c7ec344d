import type { Tool } from "ai";
import type { AdapterState } from "./adapter-state.js";
import { inToolCallback } from "./tool-callback-context.js";

/**
 * The tool's callbacks that `streamText` awaits at its stream's parts before it reads the
 * stream on, run so that a model call they make through the same recorder's middleware is
 * known as theirs and recorded as the run's next call (see `AgentCallClaims`): `onInputStart`
 * and `onInputDelta` at the tool call's input parts (`input`: whether the tool has one, whose
 * calls' input parts a stream's completion keeps), `onInputAvailable` and `needsApproval` (a
 * function; `true` / `false` are kept as they are) at its tool-call part. Each runs with the
 * SDK's toolCallId; `this` is whatever the SDK calls it on, as unwrapped.
 */
export function wrapCallbacks(
  root: AdapterState,
  tool: Tool,
): { wrapped: Partial<Tool>; input: boolean } {
  const { onInputStart, onInputDelta, onInputAvailable, needsApproval } = tool;
  const wrapped: Partial<Tool> = {};
  if (onInputStart)
    wrapped.onInputStart = function (this: unknown, options) {
      const callback = { part: "tool-input", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => onInputStart.call(this, options));
    };
  if (onInputDelta)
    wrapped.onInputDelta = function (this: unknown, options) {
      const callback = { part: "tool-input", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => onInputDelta.call(this, options));
    };
  if (onInputAvailable)
    wrapped.onInputAvailable = function (this: unknown, options) {
      const callback = { part: "tool-call", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => onInputAvailable.call(this, options));
    };
  if (typeof needsApproval === "function")
    wrapped.needsApproval = function (this: unknown, input, options) {
      const callback = { part: "tool-call", toolCallId: options.toolCallId } as const;
      return inToolCallback(root, callback, () => needsApproval.call(this, input, options));
    };
  return { wrapped, input: onInputStart !== undefined || onInputDelta !== undefined };
}
