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
 * The failed verification a read's `tamper-detected` names: a stored event whose bytes are no
 * longer an event (edited by hand, see unreadableEvent), at its run and seq. Undefined for any
 * other error, and for an unreadable event found by its commit cursor (no run and seq known).
 */
export function unreadableRunResult(
  error: unknown,
): (VerifyResult & { runId: string }) | undefined {
  if (!LedgerError.isInstance(error, "tamper-detected")) return undefined;
  const { runId, seq, reason } = error.details;
  if (typeof runId !== "string" || typeof seq !== "number") return undefined;
  return { runId, ok: false, length: seq, badSeq: seq, reason: String(reason) };
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
      const unreadable = unreadableRunResult(error);
      if (unreadable === undefined || unreadable.runId !== address.runId) throw error;
      const { runId: _runId, ...result } = unreadable;
      return result;
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
