import type { LedgerEvent } from "../events/types.js";
import type { RecordedAttempt } from "./recorded-attempts.js";

/** The status an outcome event gives its attempt; undefined for any other event. */
export function outcomeStatus(type: string): "completed" | "failed" | "abandoned" | undefined {
  switch (type) {
    case "model.completed":
    case "tool.completed":
      return "completed";
    case "model.failed":
    case "tool.failed":
      return "failed";
    case "attempt.abandoned":
      return "abandoned";
    default:
      return undefined;
  }
}

/**
 * The recorded tool attempts in flight at the crash that calls of a re-execution were matched
 * with (and refused, unless idempotent or approved), each with the causes those calls were asked
 * for under: given, or the recorder's default (the last model completion; none before the run's
 * first). With the request, that is what tells a repeat of such a call (refused again until
 * someone decides) from a new call reusing its id, where the cause recorded with the attempt
 * cannot: a call made before any model call has none. Also the outcome this process gave each
 * since (the caller's decision: abandoned, or completed or failed once the world was checked),
 * which a repeat then gets as a resume would.
 */
export class InFlightClaims {
  readonly #claims = new Map<string, { causes: Set<string | undefined>; outcome?: LedgerEvent }>();

  /** Notes that a call asked for under `causedByEventId` was matched with `attempt`. */
  claim(attempt: RecordedAttempt, causedByEventId: string | undefined): void {
    const claim = this.#claims.get(attempt.attemptId);
    if (claim) claim.causes.add(causedByEventId);
    else this.#claims.set(attempt.attemptId, { causes: new Set([causedByEventId]) });
  }

  /** Takes back a `claim` whose match was given back (its call was not recorded). */
  unclaim(attempt: RecordedAttempt, causedByEventId: string | undefined): void {
    const claim = this.#claims.get(attempt.attemptId);
    if (claim === undefined) return;
    claim.causes.delete(causedByEventId);
    if (claim.causes.size === 0 && claim.outcome === undefined)
      this.#claims.delete(attempt.attemptId);
  }

  /** True when a call asked for under `causedByEventId` was matched with `attempt`. */
  claimedUnder(attempt: RecordedAttempt, causedByEventId: string | undefined): boolean {
    return this.#claims.get(attempt.attemptId)?.causes.has(causedByEventId) ?? false;
  }

  /** Notes an event this process committed: the first outcome of a claimed attempt is kept. */
  committed(event: LedgerEvent): void {
    if (this.#claims.size === 0 || event.attemptId === undefined) return;
    const claim = this.#claims.get(event.attemptId);
    if (claim && claim.outcome === undefined && outcomeStatus(event.type) !== undefined)
      claim.outcome = event;
  }

  /** `attempt` as it stands now: with the outcome this process gave it, if any. */
  current(attempt: RecordedAttempt): RecordedAttempt {
    const outcome = this.#claims.get(attempt.attemptId)?.outcome;
    const status = outcome && outcomeStatus(outcome.type);
    return status === undefined ? attempt : { ...attempt, status, outcome };
  }
}
