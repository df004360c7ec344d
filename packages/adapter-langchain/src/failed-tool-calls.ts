import type { Attempt, JsonValue } from "@agent-ledger/core";
import { toolRequestHash } from "./tool-call-key.js";

/**
 * The tool calls whose last attempt threw, by the tool call object ledgerMiddleware was handed
 * (`request.toolCall`), until it comes again: `toolRetryMiddleware` around `ledgerMiddleware`
 * calls it again with the very request that threw. That call is a retry of the failed attempt
 * (same step, `retryOf`), not a new call, and on resume it is matched as the retry it was. A
 * later invocation (`invoke(null)` after the agent stopped) reads the turn's tool calls from its
 * checkpoint, as objects of their own, so its call is decided as any call met again is; an
 * object no longer referenced is forgotten with it.
 */
export class FailedToolCalls {
  readonly #failed = new WeakMap<object, { attempt: Attempt; requestHash: string }>();

  /** `attempt`, made for `toolCall` (asking `name` with `args`), threw. */
  failed(toolCall: object, call: { name: string; args: JsonValue }, attempt: Attempt): void {
    this.#failed.set(toolCall, { attempt, requestHash: toolRequestHash(call.name, call.args) });
  }

  /**
   * The attempt this call of `toolCall` retries: the last one made for it that threw, if it asked
   * the same (a middleware in between may have changed the arguments in place: the retry repeats
   * the recorded request). Taken once.
   */
  retried(toolCall: object, call: { name: string; args: JsonValue }): Attempt | undefined {
    const failed = this.#failed.get(toolCall);
    if (failed === undefined) return undefined;
    this.#failed.delete(toolCall);
    return failed.requestHash === toolRequestHash(call.name, call.args)
      ? failed.attempt
      : undefined;
  }
}
