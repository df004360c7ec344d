import { AsyncLocalStorage } from "node:async_hooks";
import type { AdapterState } from "./adapter-state.js";

/** A wrapped tool's `onInputStart` / `onInputDelta` running for tool call `toolCallId`. */
interface InputCallback {
  /** The recorder's own state: the one whose `wrapTools` wrapped the tool. */
  root: AdapterState;
  toolCallId: string;
}

const current = new AsyncLocalStorage<InputCallback>();

/**
 * Runs `body` (a tool's `onInputStart` or `onInputDelta`, which `streamText` awaits at the
 * stream's `tool-input-start` / `tool-input-delta` part of `toolCallId` before it reads the
 * stream on) so that a model call it makes through `root`'s middleware is known as made there:
 * it is taken as the stream's, recorded as the run's next call (see `AgentCallClaims`).
 */
export function inInputCallback<T>(root: AdapterState, toolCallId: string, body: () => T): T {
  return current.run({ root, toolCallId }, body);
}

/**
 * The toolCallId of the wrapped tool input callback of `root`'s tools a call is made in, if it
 * is made in one (another recorder's tools' callbacks are no callbacks of this run's streams).
 */
export function inputCallbackOf(root: AdapterState): string | undefined {
  const callback = current.getStore();
  return callback?.root === root ? callback.toolCallId : undefined;
}
