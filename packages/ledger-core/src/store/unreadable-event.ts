import { LedgerError } from "../events/errors.js";
import type { LedgerEvent } from "../events/types.js";

/** Where a stored event sits, as far as the reader knows. */
export interface StoredEventPlace {
  sessionId?: string;
  runId?: string;
  /** The event's seq in its run (readRun). */
  seq?: number;
  /** The event's commit cursor in its session (readSession). */
  commitCursor?: number;
}

/**
 * A stored event that cannot be read back as an event: its bytes do not decode, or its text is
 * not JSON. Only a change made outside agent-ledger (an edited row or key) does that, so it is
 * `tamper-detected`, naming the place, and never `store-unavailable`: the store answered, and
 * what it holds is bad. A caller that retries an unreachable store would retry this forever.
 * `details` hold the place (`runId` and `seq` let `verifyRun` report the run as tampered there).
 */
export function unreadableEvent(place: StoredEventPlace, why: unknown): LedgerError {
  const at: string[] = [];
  if (place.sessionId !== undefined) at.push(`session ${place.sessionId}`);
  if (place.runId !== undefined) at.push(`run ${place.runId}`);
  if (place.seq !== undefined) at.push(`seq ${place.seq}`);
  if (place.commitCursor !== undefined) at.push(`commit cursor ${place.commitCursor}`);
  const reason = why instanceof Error ? why.message : String(why);
  const details: Record<string, unknown> = { ...place, reason };
  return new LedgerError(
    "tamper-detected",
    `the stored event${at.length > 0 ? ` at ${at.join(", ")}` : ""} cannot be read (${reason}): it was changed outside agent-ledger`,
    { details, ...(why instanceof Error ? { cause: why } : {}) },
  );
}

/** The event a stored JSON text holds; `tamper-detected` at `place` if it is not JSON. */
export function parseStoredEvent(json: string, place: () => StoredEventPlace): LedgerEvent {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    throw unreadableEvent(place(), error);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw unreadableEvent(place(), "the stored JSON is not an object");
  return value as LedgerEvent;
}
