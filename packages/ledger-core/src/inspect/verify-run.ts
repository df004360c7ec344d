import { LedgerError, NotFoundError, TamperDetectedError } from "../events/errors.js";
import { computeEventHash } from "../events/hash-chain.js";
import type { EventPage, EventStore } from "../store/event-store.js";
import { assertEventStore } from "../store/validate.js";

export interface VerifyResult {
  ok: boolean;
  /** Events checked. */
  length: number;
  /** First seq that fails verification. */
  badSeq?: number;
  reason?: string;
}

/**
 * Recomputes a run's hash chain (§7): each event's hash over its canonical JSON, each
 * `prevHash` against the previous event, gap-free seqs, and the run head against the last
 * event (so a deleted tail is caught too). A run the store does not hold is `not-found`.
 */
export async function verifyRun(
  store: EventStore,
  address: { sessionId: string; runId: string },
): Promise<VerifyResult> {
  assertEventStore(store);
  let expectedSeq = 0;
  let prevHash: string | null = null;
  for (;;) {
    let page: EventPage;
    try {
      page = await store.readRun({ ...address, fromSeq: expectedSeq, limit: 2000 });
    } catch (error) {
      // A stored event that is no longer an event (its bytes edited): tampered at that seq.
      if (!LedgerError.isInstance(error, "tamper-detected")) throw error;
      const { badSeq, runId, reason } = error.details;
      if (typeof badSeq !== "number" || runId !== address.runId) throw error;
      return { ok: false, length: badSeq, badSeq, reason: String(reason) };
    }
    for (const event of page.events) {
      const fail = (reason: string): VerifyResult => ({
        ok: false,
        length: expectedSeq,
        badSeq: expectedSeq,
        reason,
      });
      if (event.seq !== expectedSeq) return fail(`expected seq ${expectedSeq}, found ${event.seq}`);
      if (event.sessionId !== address.sessionId || event.runId !== address.runId)
        return fail("event is addressed to another run");
      if (event.prevHash !== prevHash)
        return fail("prevHash does not match the previous event's hash");
      if (computeEventHash(event) !== event.hash) return fail("content does not match its hash");
      prevHash = event.hash;
      expectedSeq++;
    }
    if (page.events.length < 2000) break;
  }
  const head = await store.runHead(address);
  // Nothing to verify is not a verified run: a mistyped id must not read as intact.
  if (!head.exists && expectedSeq === 0)
    throw new NotFoundError(`run ${address.runId} not found in session ${address.sessionId}`, {
      ...address,
    });
  if (head.length !== expectedSeq || head.lastHash !== prevHash) {
    return {
      ok: false,
      length: expectedSeq,
      badSeq: Math.min(head.length, expectedSeq),
      reason: `run head says ${head.length} events ending in ${head.lastHash}, the log has ${expectedSeq}`,
    };
  }
  return { ok: true, length: expectedSeq };
}

/** Like `verifyRun`, but throws `tamper-detected` with the bad seq. */
export async function assertRunIntact(
  store: EventStore,
  address: { sessionId: string; runId: string },
): Promise<void> {
  const result = await verifyRun(store, address);
  if (!result.ok) {
    throw new TamperDetectedError({
      ...address,
      badSeq: result.badSeq ?? 0,
      reason: result.reason ?? "verification failed",
    });
  }
}
