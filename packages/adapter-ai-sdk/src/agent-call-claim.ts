import type { Attempt } from "@agent-ledger/core";

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
 * Which agent language model call holds the run. An agent makes one call at a time, so a call
 * that starts while another holds the run is a second agent, whose calls replay could not tell
 * apart from the first's (see `claimAgentCall`).
 *
 * One exception, which is no second agent: the SDK's `streamText` runs some of the app's
 * callbacks at a stream's `tool-call` part (`experimental_repairToolCall`, a tool's
 * `needsApproval` and `onInputAvailable`) and awaits them before it reads the next part. A call
 * made there (an LLM repairing the input, or judging the call) starts while that stream is
 * open, but always at the same point of it: after the tool-call part was passed on and before
 * the stream is read again. Such a call holds the run on top of the stream, is recorded as the
 * next call of the run, and is replayed in that place; once it ends, the stream holds the run
 * again. The middleware cannot see which code made a call (the SDK runs those callbacks in its
 * own async context, not one the middleware set), so another agent's call that starts in that
 * very moment is taken for the callback's; it holds the run then, so the stream's agent's next
 * step is refused if it is still in flight.
 */
export class AgentCallClaims {
  #held: AgentCallClaim | undefined;
  /** Open streams whose last part passed on is a tool call, not read again since. */
  readonly #atToolCall = new Set<Attempt>();

  /** The attempt of the call holding the run, if it has begun. */
  get holder(): Attempt | "claimed" | undefined {
    return this.#held && (this.#held.attempt ?? "claimed");
  }

  /** Whether the call holding the run claimed it after waiting for a stream. */
  get holderWaited(): boolean {
    return this.#held?.waited === true;
  }

  /**
   * Claims the run for a call; `undefined` if another call holds it. `waited`: the call waited
   * for the stream that held the run.
   */
  claim(waited = false): AgentCallClaim | undefined {
    const held = this.#held;
    if (held !== undefined && !(held.attempt && this.#atToolCall.has(held.attempt)))
      return undefined;
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
   * The stream of `attempt` passed on a tool-call part (`true`), or is read again, or ended
   * (`false`).
   */
  streamAtToolCall(attempt: Attempt, atToolCall: boolean): void {
    if (atToolCall) this.#atToolCall.add(attempt);
    else this.#atToolCall.delete(attempt);
  }

  #end(claim: AgentCallClaim): void {
    claim.ended = true;
    if (claim.attempt) this.#atToolCall.delete(claim.attempt);
    while (this.#held?.ended) this.#held = this.#held.waiting;
  }
}
