import { outcomeUnknown } from "../events/errors.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { Attempt } from "./attempt.js";

/** What a call retried after its `before*` rejected must ask again to be that call. */
export interface AdoptCriteria {
  kind: "model" | "tool";
  requestHash: string;
  /** A tool's name and id, compared as given (a call without an id matches one without). */
  name?: string | undefined;
  toolCallId?: string | undefined;
  /** Compared only when the caller names them: by default the recorder picks its own. */
  stepId?: string | undefined;
  causedByEventId?: string | undefined;
  /** For `retry(attempt)`: the attempt it retries. */
  retryOf?: string | undefined;
}

/**
 * What a request's failed commit leaves to do once it is known whether the request was written
 * (at once when the store refused it, else when the run is read back).
 */
export interface UnsureSettlement {
  /** Not written: e.g. the resume's match of the call given back (ReplayCursor.giveBack). */
  notWritten?: (() => void) | undefined;
  /** Written after all (found stored): e.g. a tool retry noted for child runs (ChildRuns). */
  written?: ((attempt: Attempt) => void) | undefined;
}

/**
 * Requests (`*.requested`) whose append failed with its outcome unknown (`store-unavailable`
 * after it may have been written, the reply lost). `before*` rejected, and the caller was told
 * not to make the call; yet the event may be in the ledger. The recorder's next write reads the
 * run back (CommitQueue `readBack`): a request found stored is kept here as an orphan, the
 * attempt `before*` would have returned, until a call that asks the same adopts it. A caller
 * that retries the rejected call (as it should once the store answers) so gets one recorded
 * call, not a second `*.requested` beside one nothing ever completes: the orphan would be an
 * in-flight call for inspection and would shift the k-th call matching of a resume.
 *
 * An orphan no call adopts stays without an outcome: the recorder cannot know that its caller
 * did not make the call after all, so it leaves the decision to a person (inspection lists it
 * unresolved; a resume answers it as a call in flight at a crash).
 */
export class UnsureRequests {
  /** Sent with an unknown outcome, not read back yet, by the event's id. */
  readonly #sent = new Map<string, { attempt: Attempt; settlement: UnsureSettlement }>();
  /** Found stored, adopted by no call yet: in the order they were written. */
  #orphans: Attempt[] = [];

  /**
   * Notes a request whose append failed, if its outcome is unknown (see `readBack`); one known
   * not written (refused, or never sent: no id yet) is settled as such at once.
   */
  failed(event: NewEvent, attempt: Attempt, error: unknown, settlement: UnsureSettlement): void {
    if (outcomeUnknown(error) && event.eventId !== undefined)
      this.#sent.set(event.eventId, { attempt, settlement });
    else settlement.notWritten?.();
  }

  /**
   * Hears what reading the run back found of `event`: stored (at `stored.seq`) or not. Returns
   * the attempt it made an orphan, if it did.
   */
  readBack(event: NewEvent, stored: LedgerEvent | undefined): Attempt | undefined {
    const sent = event.eventId === undefined ? undefined : this.#sent.get(event.eventId);
    if (sent === undefined) return undefined;
    this.#sent.delete(event.eventId as string);
    const { attempt, settlement } = sent;
    if (stored === undefined) {
      settlement.notWritten?.();
      return undefined;
    }
    attempt.requestedEventId = stored.eventId;
    attempt.seq = stored.seq;
    settlement.written?.(attempt);
    this.#orphans.push(attempt);
    return attempt;
  }

  /** Requests found stored that no call has adopted: each still without an outcome. */
  get orphans(): readonly Attempt[] {
    return this.#orphans;
  }

  /**
   * The first orphan still `open` (not decided meanwhile) that a call asking `criteria` is a
   * retry of, taken; else undefined.
   */
  adopt(criteria: AdoptCriteria, open: (attemptId: string) => boolean): Attempt | undefined {
    this.#orphans = this.#orphans.filter((orphan) => open(orphan.attemptId));
    const index = this.#orphans.findIndex((orphan) => sameCall(orphan, criteria));
    if (index < 0) return undefined;
    const [orphan] = this.#orphans.splice(index, 1);
    return orphan;
  }
}

/** Whether `orphan` (a stored request) is the call `criteria` asks. */
export function sameCall(orphan: Attempt, criteria: AdoptCriteria): boolean {
  return (
    orphan.kind === criteria.kind &&
    orphan.requestHash === criteria.requestHash &&
    (criteria.kind === "model" ||
      (orphan.name === criteria.name && orphan.toolCallId === criteria.toolCallId)) &&
    (criteria.stepId === undefined || orphan.stepId === criteria.stepId) &&
    (criteria.causedByEventId === undefined ||
      orphan.causedByEventId === criteria.causedByEventId) &&
    (criteria.retryOf === undefined || orphan.retryOf === criteria.retryOf)
  );
}
