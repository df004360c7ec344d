import { assertOptions, type KnownKeys } from "../events/argument-checks.js";
import { LedgerError, NotFoundError, TamperDetectedError } from "../events/errors.js";
import { computeEventHash } from "../events/hash-chain.js";
import type { EventPage, EventStore } from "../store/event-store.js";
import { stopBeforeNextPage, stopSignal } from "../store/stop-signal.js";
import { assertEventStore } from "../store/validate.js";
import { badBlobReason, RunBlobCheck } from "./run-blobs.js";

export interface VerifyResult {
  ok: boolean;
  /** Events checked. */
  length: number;
  /** First seq that fails verification. */
  badSeq?: number;
  reason?: string;
  /**
   * Set when what fails at `badSeq` is a blob that event names (the first event to name it):
   * not in the store (`missing`), or its content does not hash to its reference (`corrupt`).
   * Reading the run's content fails there (`not-found`, `tamper-detected`).
   */
  blob?: { ref: string; problem: "missing" | "corrupt" };
  /**
   * Present when `signal` stopped the check between pages (with `ok: false`: the run was not
   * verified): the first `length` events and the blobs they name were checked and found sound,
   * and nothing is known of the rest.
   */
  stopped?: true;
}

const VERIFY_RUN_OPTIONS: KnownKeys<VerifyRunOptions> = { signal: true };

/** Options of `verifyRun`. */
export interface VerifyRunOptions {
  /**
   * Stops the check between pages once aborted (a CLI's Ctrl-C on a long run): the result is
   * `{ ok: false, stopped: true, length }`, never `ok: true`. A turn of the event loop is taken
   * before each page, so an abort from a signal handler is seen even on a store whose reads
   * complete synchronously (SQLite).
   */
  signal?: AbortSignal;
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
 * event (so a deleted tail is caught too). Every blob the events name (§8) is read, a page of
 * events' blobs at a time in batches, and must hash to its reference: the chain covers the
 * references, not the content. The first failure by seq is reported. A run the store does not
 * hold is `not-found`. A run appended to while it is verified is verified to the end its head
 * gives once the last page is read. An aborted `options.signal` stops it between pages (`stopped`).
 */
export async function verifyRun(
  store: EventStore,
  address: { sessionId: string; runId: string },
  options: VerifyRunOptions = {},
): Promise<VerifyResult> {
  assertEventStore(store);
  assertOptions(options, VERIFY_RUN_OPTIONS, "verifyRun", { keysAt: "$" });
  const signal = stopSignal(options.signal);
  let expectedSeq = 0;
  let prevHash: string | null = null;
  const blobs = new RunBlobCheck(store);
  // The first blob that fails among those named by the events verified so far: it comes
  // before any failure of the chain found after them.
  const blobFailure = async (): Promise<VerifyResult | undefined> => {
    const bad = await blobs.check();
    if (bad === undefined) return undefined;
    return {
      ok: false,
      length: expectedSeq,
      badSeq: bad.seq,
      reason: badBlobReason(bad),
      blob: { ref: bad.ref, problem: bad.problem },
    };
  };
  // How many events had been read when the run's head was last found ahead of them.
  let headAheadAt: number | undefined;
  for (;;) {
    // Between pages, the blobs of the events checked so far checked too (below).
    if (await stopBeforeNextPage(signal)) return { ok: false, length: expectedSeq, stopped: true };
    let page: EventPage;
    try {
      page = await store.readRun({
        sessionId: address.sessionId,
        runId: address.runId,
        fromSeq: expectedSeq,
        limit: 2000,
      });
    } catch (error) {
      const unreadable = unreadableRunResult(error);
      if (unreadable === undefined || unreadable.runId !== address.runId) throw error;
      const { runId: _runId, ...result } = unreadable;
      return (await blobFailure()) ?? result;
    }
    for (const event of page.events) {
      const fail = async (reason: string): Promise<VerifyResult> =>
        (await blobFailure()) ?? { ok: false, length: expectedSeq, badSeq: expectedSeq, reason };
      if (event.seq !== expectedSeq) return fail(`expected seq ${expectedSeq}, found ${event.seq}`);
      if (event.sessionId !== address.sessionId || event.runId !== address.runId)
        return fail("event is addressed to another run");
      if (event.prevHash !== prevHash)
        return fail("prevHash does not match the previous event's hash");
      if (computeEventHash(event) !== event.hash) return fail("content does not match its hash");
      blobs.add(event);
      prevHash = event.hash;
      expectedSeq++;
    }
    const bad = await blobFailure();
    if (bad) return bad;
    if (page.events.length === 2000) continue;
    const head = await store.runHead(address);
    // Nothing to verify is not a verified run: a mistyped id must not read as intact.
    if (!head.exists && expectedSeq === 0)
      throw new NotFoundError(`run ${address.runId} not found in session ${address.sessionId}`, {
        ...address,
      });
    // A head ahead of the log: appended to since its last page was read (its agent writes
    // while it is verified), so read on; ahead again with nothing more read, the log lacks
    // the events the head counts (a deleted tail).
    if (head.length > expectedSeq && headAheadAt !== expectedSeq) {
      headAheadAt = expectedSeq;
      continue;
    }
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
