import { AsyncLocalStorage } from "node:async_hooks";
import type { AdapterState } from "./adapter-state.js";

/**
 * A wrapped tool's callback that `streamText` awaits at one of its stream's parts, before it
 * reads the stream on: `onInputStart` / `onInputDelta` at the `tool-input-start` /
 * `tool-input-delta` parts of tool call `toolCallId` (`part: "tool-input"`), `onInputAvailable`
 * and `needsApproval` at its `tool-call` part (`part: "tool-call"`).
 */
export interface ToolCallback {
  part: "tool-input" | "tool-call";
  toolCallId: string;
}

interface RunningCallback extends ToolCallback {
  /** The recorder's own state: the one whose `wrapTools` wrapped the tool. */
  root: AdapterState;
}

const current = new AsyncLocalStorage<RunningCallback>();

/**
 * Runs `body` (the tool's callback `callback` names) so that a model call it makes through
 * `root`'s middleware is known as made there: it is taken as the stream's, recorded as the
 * run's next call (see `AgentCallClaims`). A callback at a tool-call part is entered only once
 * the SDK has parsed (and repaired) the call: from then on, no call made outside that tool
 * call's callbacks is the stream's (`toolCallbackEntered`).
 */
export function inToolCallback<T>(root: AdapterState, callback: ToolCallback, body: () => T): T {
  if (callback.part === "tool-call") root.toolCallbackEntered(callback.toolCallId);
  return current.run({ root, part: callback.part, toolCallId: callback.toolCallId }, body);
}

/**
 * The wrapped tool callback of `root`'s tools a call is made in, if it is made in one (another
 * recorder's tools' callbacks are no callbacks of this run's streams).
 */
export function toolCallbackOf(root: AdapterState): ToolCallback | undefined {
  const callback = current.getStore();
  return callback?.root === root
    ? { part: callback.part, toolCallId: callback.toolCallId }
    : undefined;
}
