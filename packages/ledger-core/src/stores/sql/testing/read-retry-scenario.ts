import { expect } from "vitest";
import { LedgerError } from "../../../events/errors.js";
import { uuidv7 } from "../../../events/ids.js";
import { SessionRecorder } from "../../../recorder/session-recorder.js";
import type { EventStore } from "../../../store/event-store.js";

const actor = { type: "agent", id: "a" } as const;

/** Holds this process's event loop for `ms` without yielding to it. */
function holdEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * `read`, sent right after `kills` went out (the server ending the store's connections, as an
 * operator or a failover does) and before the store's driver has read a byte of it: a resume
 * that lands right then. `kills` is already sent; the event loop is held while the server
 * carries it out, and `read` is called as the hold ends, so its request goes out on a
 * connection the server already ended. `kills` is awaited only then (awaiting its answer first
 * would let the loop read the ended connections' notices before the read, or not, whichever
 * socket it read first).
 */
export async function readRightAfter<T>(
  kills: Promise<unknown>,
  read: () => Promise<T>,
): Promise<T> {
  holdEventLoop(200);
  const reading = read().then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  await kills;
  const outcome = await reading;
  if ("error" in outcome) throw outcome.error;
  return outcome.value;
}

/**
 * The read-retry scenario every networked store shares: a resume, and then each of the seven
 * reads of the store, each sent by `afterKill` right after the server ended the store's
 * connections, succeeds (sent again on a new connection). `pooled`: the store keeps a pool, and
 * three idle connections are opened in it first, all ended, so the pool hands one out. Closes
 * `store`.
 */
export async function readsSucceedAfterKill(
  store: EventStore & Required<Pick<EventStore, "getBlobs">>,
  afterKill: <T>(read: () => Promise<T>) => Promise<T>,
  options: { pooled?: boolean } = {},
): Promise<void> {
  await store.init();
  const sessionId = uuidv7();
  const recorder = new SessionRecorder({ store, sessionId, runId: "r", actor });
  await recorder.startRun();
  await recorder.modelCompleted(await recorder.beforeModelCall({ request: { n: 1 } }), {
    ok: true,
  });
  // Three idle connections in the pool, all ended: the pool hands one out.
  if (options.pooled) await Promise.all([1, 2, 3].map(() => store.listRuns(sessionId)));
  const resumed = await afterKill(() =>
    SessionRecorder.resume({ store, sessionId, runId: "r", actor }),
  );
  expect(resumed.resumed).toBe(true);
  expect(resumed.length).toBe(3);

  // Each read of the store, the same way.
  const ref = await store.putBlob("kept");
  const reads: Record<string, () => Promise<unknown>> = {
    readRun: () => store.readRun({ sessionId, runId: "r" }),
    readSession: () => store.readSession({ sessionId }),
    listRuns: () => store.listRuns(sessionId),
    listSessions: () => store.listSessions({ limit: 10 }),
    runHead: () => store.runHead({ sessionId, runId: "r" }),
    getBlob: () => store.getBlob(ref),
    getBlobs: () => store.getBlobs([ref]),
  };
  for (const [operation, read] of Object.entries(reads))
    await expect(afterKill(read), operation).resolves.toBeDefined();
  await store.close();
}

/** A store's own parts of `refusedOrLateSentOnce`. */
export interface SentOnceParts {
  /** The store, not yet initialised, whose reads are bounded by `timeoutMs`. */
  store: EventStore;
  timeoutMs: number;
  sessionId: string;
  /** The store's sends: counted from `reset`. */
  sends: { reset(): void; count(): number };
  /** Makes every read of the session fail the same way (as an operator's change would). */
  refuse(): Promise<void>;
  /** Checks that `error`'s cause is the server's refusal. */
  refusedBy(error: unknown): void;
  /** Holds the server (a lock, a busy script) past the store's bound, until `release`. */
  holdPastBound(): Promise<void>;
  release(): Promise<void>;
  /**
   * The read refused, and the read held past the bound: by default (the SQL stores) `readRun`
   * and `runHead` of run `r`.
   */
  reads?: { refused(): Promise<unknown>; late(): Promise<unknown> };
}

/**
 * A read the server refuses, and a read that waits past the store's bound, each fail with
 * `store-unavailable` and are sent once: neither is sent again.
 */
export async function refusedOrLateSentOnce(parts: SentOnceParts): Promise<void> {
  const { store, sessionId, sends } = parts;
  const reads = parts.reads ?? {
    refused: () => store.readRun({ sessionId, runId: "r" }),
    late: () => store.runHead({ sessionId, runId: "r" }),
  };
  await store.init();
  await store.append({ sessionId, runId: "r", expectedSeq: 0, events: [{ type: "run.started" }] });
  await parts.refuse();
  sends.reset();
  const refused = await reads.refused().catch((error: unknown) => error);
  expect(LedgerError.isInstance(refused, "store-unavailable")).toBe(true);
  parts.refusedBy(refused);
  expect(sends.count()).toBe(1);

  // Held past the bound: the read times out (its connection is dropped).
  sends.reset();
  await parts.holdPastBound();
  const late = await reads.late().catch((error: unknown) => error);
  await parts.release();
  expect(LedgerError.isInstance(late, "store-unavailable")).toBe(true);
  expect((late as Error).message).toContain(`within ${parts.timeoutMs} ms`);
  expect(sends.count()).toBe(1);
}
