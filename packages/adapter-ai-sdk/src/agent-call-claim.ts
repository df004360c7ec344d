import type { Attempt } from "@agent-ledger/core";
import type { ToolCallback } from "./tool-callback-context.js";

/** One agent call's hold on the run (see `AgentCallClaims`). */
export interface AgentCallClaim {
  /** The call's attempt, once begun. */
  attempt?: Attempt;
  /** The stream this call was made from a callback of, which holds the run again after it. */
  readonly waiting: AgentCallClaim | undefined;
  /** Answered, failed, or could not begin. */
  ended: boolean;
  /** Claimed once the stream holding the run had been recorded (see `claimAgentCall`). */
  readonly waited: boolean;
}

/**
 * Where an open stream waits for the SDK's callbacks, until it is read again: after the
 * `tool-call` part of tool call `toolCallId` (`callbacksEntered` once a wrapped
 * `onInputAvailable` or `needsApproval` of that call has begun), or after its
 * `tool-input-start` / `tool-input-delta` part (`toolName`: the tool the input is for).
 */
export type StreamWait =
  | { at: "tool-call"; toolCallId: string; toolName: string; callbacksEntered: boolean }
  | { at: "tool-input"; toolCallId: string; toolName: string | undefined };

/**
 * Which agent language model call holds the run. An agent makes one call at a time, so a call
 * that starts while another holds the run is a second agent, whose calls replay could not tell
 * apart from the first's (see `claimAgentCall`).
 *
 * Two exceptions, which are no second agent: the SDK's `streamText` runs some of the app's
 * callbacks at a stream's parts and awaits them before it reads the next part. At a `tool-call`
 * part, `experimental_repairToolCall` (only if the call does not parse), then the tool's
 * `onInputAvailable` and `needsApproval`; at a `tool-input-start` / `tool-input-delta` part, the
 * tool's `onInputStart` / `onInputDelta`. A call made there (an LLM repairing the input, or
 * judging the call) starts while that stream is open, but always at the same point of it:
 * after the part was passed on and before the stream is read again. Such a call holds the run
 * on top of the stream, is recorded as the next call of the run, and is replayed in that place;
 * once it ends, the stream holds the run again.
 *
 * `wrapTools` runs a tool's callbacks in a context naming the tool call (`ToolCallback`, see
 * `tool-callback-context.ts`), and a call made in the callback of the part the stream waits at
 * (same part, same toolCallId) is taken. Tool input parts come many to a call, and a stream
 * waits after one whenever its consumer is slow, so there no other call is taken. At a
 * tool-call part, a call made in no such context is still taken until a wrapped callback of
 * that tool call has begun: until then it may be the repair's (which belongs to no tool, so no
 * context names it) or the callback's of a tool not given through `wrapTools`, which cannot be
 * told from another agent's call starting in that moment. Once the SDK has begun a wrapped
 * `onInputAvailable` / `needsApproval` there, the repair is done, and only calls made in those
 * callbacks are the stream's.
 */
export class AgentCallClaims {
  #held: AgentCallClaim | undefined;
  /** Open streams whose last part passed on runs the SDK's callbacks, not read again since. */
  readonly #waiting = new Map<Attempt, StreamWait>();

  /** The attempt of the call holding the run, if it has begun. */
  get holder(): Attempt | "claimed" | undefined {
    return this.#held && (this.#held.attempt ?? "claimed");
  }

  /** Whether the call holding the run claimed it after waiting for a stream. */
  get holderWaited(): boolean {
    return this.#held?.waited === true;
  }

  /** Where the stream of `attempt` waits for the SDK's callbacks, if it does. */
  waitOf(attempt: Attempt): StreamWait | undefined {
    return this.#waiting.get(attempt);
  }

  /**
   * Claims the run for a call; `undefined` if another call holds it. `waited`: the call waited
   * for the stream that held the run. `callback`: the wrapped tool callback the call is made
   * in, if it is.
   */
  claim(waited = false, callback?: ToolCallback): AgentCallClaim | undefined {
    const held = this.#held;
    if (held !== undefined && !this.#atCallbackOf(held, callback)) return undefined;
    this.#held = { waiting: held, ended: false, waited };
    return this.#held;
  }

  /** The claimed call began as `attempt`, or (`undefined`) could not begin. */
  began(claim: AgentCallClaim, attempt: Attempt | undefined): void {
    if (attempt) claim.attempt = attempt;
    else this.#end(claim);
  }

  /** `attempt`'s call was answered or failed: the run is free, or the stream it waited on holds it again. */
  ended(attempt: Attempt): void {
    let claim = this.#held;
    while (claim && claim.attempt !== attempt) claim = claim.waiting;
    if (claim) this.#end(claim);
  }

  /**
   * The stream of `attempt` passed on a part the SDK runs callbacks at (`wait`), or is read
   * again, or ended (`undefined`).
   */
  streamWaits(attempt: Attempt, wait: StreamWait | undefined): void {
    if (wait) this.#waiting.set(attempt, wait);
    else this.#waiting.delete(attempt);
  }

  /**
   * A wrapped `onInputAvailable` or `needsApproval` of tool call `toolCallId` begins: the SDK
   * has parsed (or repaired) the call, and a stream waiting at its tool-call part takes no call
   * made outside that tool call's callbacks any more.
   */
  toolCallbackEntered(toolCallId: string): void {
    for (const wait of this.#waiting.values())
      if (wait.at === "tool-call" && wait.toolCallId === toolCallId) wait.callbacksEntered = true;
  }

  /** Whether `held` is a stream waiting for the callbacks a call made in `callback` may be. */
  #atCallbackOf(held: AgentCallClaim, callback: ToolCallback | undefined): boolean {
    const wait = held.attempt && this.#waiting.get(held.attempt);
    if (!wait) return false;
    if (callback?.part === wait.at && callback.toolCallId === wait.toolCallId) return true;
    return wait.at === "tool-call" && !wait.callbacksEntered;
  }

  #end(claim: AgentCallClaim): void {
    claim.ended = true;
    if (claim.attempt) this.#waiting.delete(claim.attempt);
    while (this.#held?.ended) this.#held = this.#held.waiting;
  }
}
