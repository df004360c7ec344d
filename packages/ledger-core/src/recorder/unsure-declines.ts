import { outcomeUnknown } from "../events/errors.js";
import type { LedgerEvent, NewEvent } from "../events/types.js";
import type { Attempt } from "./attempt.js";
import { answeredWith } from "./replayed-calls.js";
import { type AdoptCriteria, sameCall } from "./unsure-requests.js";

/** A declined call as `declineToolCall` resolves with it: requested, and answered abandoned. */
export function declined(
  attempt: Attempt,
  requested: LedgerEvent,
  abandonment: LedgerEvent,
): Attempt {
  attempt.requestedEventId = requested.eventId;
  attempt.seq = requested.seq;
  return answeredWith(attempt, abandonment, "abandoned");
}

/** A decline whose append failed, sent with its outcome unknown. */
export interface SentDecline {
  event: NewEvent;
  abandonment: NewEvent;
  attempt: Attempt;
}

/**
 * Declines whose append failed with its outcome unknown (`store-unavailable` after it may have
 * been written). The recorder's next write reads the run back (CommitQueue `readBack`): a
 * decline found stored is kept here, answered, until the caller declines the call again (as it
 * should once the store answers), so that the call is not recorded twice.
 */
export class UnsureDeclines {
  /** Sent with an unknown outcome, not read back yet, by the request's event id. */
  readonly #sent = new Map<string, SentDecline>();
  /** Found stored, not declined again yet: each answered with its abandonment. */
  #written: Attempt[] = [];

  /** Notes a decline whose append failed, if its outcome is unknown. */
  failed(sent: SentDecline, error: unknown): void {
    if (outcomeUnknown(error) && sent.event.eventId !== undefined)
      this.#sent.set(sent.event.eventId, sent);
  }

  /** Hears what reading the run back found of `event` (see `heardReadBack`). */
  readBack(event: NewEvent, stored: readonly LedgerEvent[] | undefined): void {
    const sent = event.eventId === undefined ? undefined : this.#sent.get(event.eventId);
    if (sent === undefined) return;
    this.#sent.delete(event.eventId as string);
    // Sent in one append: both stored, or neither.
    const request = stored?.find((one) => one.eventId === event.eventId);
    const abandonment = stored?.find((one) => one.eventId === sent.abandonment.eventId);
    if (request === undefined || abandonment === undefined) return;
    this.#written.push(declined(sent.attempt, request, abandonment));
  }

  /** The decline found stored of the call `criteria` asks, taken; else undefined. */
  take(criteria: AdoptCriteria): Attempt | undefined {
    if (this.#written.length === 0) return undefined;
    const index = this.#written.findIndex((written) => sameCall(written, criteria));
    if (index < 0) return undefined;
    return this.#written.splice(index, 1)[0];
  }
}
