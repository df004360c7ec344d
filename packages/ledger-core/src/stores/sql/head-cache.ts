import { TERMINAL_TYPES } from "../../events/types.js";
import { type PlannedEvent, planAppend } from "../../store/append-plan.js";
import { runKey, setBounded } from "../../store/bounded-map.js";
import type { AppendResult } from "../../store/event-store.js";
import { refsOf } from "../../store/retention.js";
import type { ValidAppend } from "../../store/validate.js";
import type { BlobRow } from "./sql-backend.js";

/** Heads of runs a store remembers from its own appends; the first remembered go first. */
const maxHeads = 4096;

/** What a store knows of a running run's head after its own last successful append to it. */
export interface CachedHead {
  length: number;
  lastHash: string | null;
}

/**
 * One append planned against a cached head, for a backend's one-statement path: written only
 * if the stored head still is `expected` and the run is still running (the statement checks
 * that on the locked row), so a stale cache can never write a wrong chain.
 */
export interface HeadAppend {
  sessionId: string;
  runId: string;
  expected: CachedHead;
  /** The head after the batch. */
  length: number;
  status: string;
  lastHash: string | null;
  now: string;
  /**
   * The blobs the batch names (`evidenceRefs`), each once, in code-point order: written into
   * the reference index for the session by the same statement, in one order for every writer.
   */
  refs: string[];
  /**
   * Content stored with the batch (the request's `blobs`, each once, in ref order), in the
   * same commit, after the session's counter row and before the refs are indexed.
   */
  blobs: BlobRow[];
  /** The batch in seq order; `bodyPrefix` + commit cursor + `}` is the stored body. */
  events: {
    seq: number;
    eventId: string;
    eventType: string;
    recordedAt: string;
    bodyPrefix: string;
  }[];
}

function byRunKey(x: HeadAppend, y: HeadAppend): number {
  if (x.sessionId !== y.sessionId) return x.sessionId < y.sessionId ? -1 : 1;
  return x.runId < y.runId ? -1 : x.runId > y.runId ? 1 : 0;
}

/**
 * A batch's appends ordered by session, then run, each with its place in the batch (to answer
 * it there): the order a batch locks its runs rows in (before the sessions' rows), so two
 * batches, or a batch and the transactional path, wait on each other instead of deadlocking.
 */
export function inLockOrder(appends: HeadAppend[]): { append: HeadAppend; index: number }[] {
  return appends
    .map((append, index) => ({ append, index }))
    .sort((x, y) => byRunKey(x.append, y.append));
}

/**
 * Bounded map of (session, run) to the head a store's last successful append left. It is only a
 * hint: an entry is removed on any error or unknown outcome, and the database re-checks it. A
 * forgotten entry keeps its key (its head undefined), so the append that forgets it and then
 * remembers it again moves nothing in the map (see setBounded).
 */
export class HeadCache {
  readonly #heads = new Map<string, CachedHead | undefined>();

  get(sessionId: string, runId: string): CachedHead | undefined {
    return this.#heads.get(runKey(sessionId, runId));
  }

  forget(sessionId: string, runId: string): void {
    const key = runKey(sessionId, runId);
    if (this.#heads.get(key) !== undefined) this.#heads.set(key, undefined);
  }

  /** Remembers the head after a written batch; a batch that closed the run is forgotten. */
  remember(sessionId: string, runId: string, result: AppendResult): void {
    const key = runKey(sessionId, runId);
    const last = result.events[result.events.length - 1];
    if (result.deduplicated || last === undefined || TERMINAL_TYPES.has(last.type))
      this.#heads.delete(key);
    else setBounded(this.#heads, key, { length: last.seq + 1, lastHash: last.hash }, maxHeads);
  }
}

/**
 * Plans `request` against a cached head with the shared `planAppend` (no lookup of existing ids:
 * a batch already stored would have moved the head, and an id used elsewhere in the session fails
 * the insert on its unique index). Undefined when the plan is not a plain write on this head:
 * the transactional path then gives the exact answer.
 */
export function planAtHead(
  request: ValidAppend,
  head: CachedHead,
  now: string,
  blobs: BlobRow[],
): { append: HeadAppend; planned: PlannedEvent[] } | undefined {
  if (request.expectedSeq !== head.length) return undefined;
  let plan: ReturnType<typeof planAppend>;
  try {
    plan = planAppend({
      request,
      head: { exists: true, length: head.length, status: "running", lastHash: head.lastHash },
      existing: [],
      now,
    });
  } catch {
    return undefined;
  }
  if (plan.kind !== "write") return undefined;
  return {
    planned: plan.events,
    append: {
      sessionId: request.sessionId,
      runId: request.runId,
      expected: head,
      length: plan.head.length,
      status: plan.head.status,
      lastHash: plan.head.lastHash,
      now,
      refs: refsOf(plan.events, blobs).sort(),
      blobs,
      // The cursor is assigned by the statement: the body is the event's JSON with
      // `commitCursor` as its last key, exactly what JSON.stringify gives for the event returned.
      events: plan.events.map((event) => ({
        seq: event.seq,
        eventId: event.eventId,
        eventType: event.type,
        recordedAt: event.recordedAt,
        bodyPrefix: `${JSON.stringify(event).slice(0, -1)},"commitCursor":`,
      })),
    },
  };
}
