import { forkSourceMissing, forkTargetTaken } from "../../events/errors.js";
import type { LedgerEvent, RunHead } from "../../events/types.js";
import {
  assignCursors,
  EMPTY_HEAD,
  type PlannedEvent,
  planAppend,
  planFork,
} from "../../store/append-plan.js";
import type { AppendResult, DeleteSessionResult, ForkRequest } from "../../store/event-store.js";
import { assertUnchanged, openRunError, refsOf, sessionNotFound } from "../../store/retention.js";
import type { ValidAppend } from "../../store/validate.js";
import { type EventRow, eventRow, type HeadRow, headOf, parseBody } from "./rows.js";
import type { BlobRow } from "./sql-backend.js";

/**
 * The I/O steps of a write transaction. The write algorithm is written once, as a generator that
 * yields these steps and receives their results; each dialect only executes steps. The SQLite
 * store runs the generator synchronously inside a better-sqlite3 transaction (which cannot
 * contain an `await`), the server stores run it with `await` on a pooled connection.
 */
export type WriteStep =
  /** Read the run's head row, locking it until commit (`FOR UPDATE`); undefined when absent. */
  | { kind: "lock-head"; sessionId: string; runId: string }
  /** Bodies of the session's stored events whose eventId is one of `eventIds`. */
  | { kind: "find-events"; sessionId: string; eventIds: string[] }
  /** Bodies of the run's events with `seq < uptoSeq`, in seq order. */
  | { kind: "read-run"; sessionId: string; runId: string; uptoSeq: number }
  /**
   * Add `count` to the session's cursor counter (creating the row), returning the new value.
   * The row stays locked until commit, so cursors are gap-free and in commit order.
   */
  | { kind: "reserve-cursors"; sessionId: string; count: number; now: string }
  | { kind: "insert-events"; rows: EventRow[] }
  /**
   * Store blobs (each once, in ref order) as `SqlBackend.putBlobs` does, inside the write
   * transaction: inserted, or their `touched_at` set again, to the database's clock.
   */
  | { kind: "put-blobs"; blobs: BlobRow[] }
  /** Add (blob, session) pairs to the blob reference index, ignoring pairs already there. */
  | { kind: "index-refs"; sessionId: string; refs: string[] }
  /**
   * Lock the session (its counter row, until commit); its last commit cursor, or undefined when
   * the session is unknown.
   */
  | { kind: "lock-session"; sessionId: string }
  /** Ids of the session's runs whose status is still `running`, in no order (openRunError sorts them). */
  | { kind: "open-runs"; sessionId: string }
  /**
   * Delete the blobs the session references (its rows of the blob reference index) that no
   * other session references and that were last touched `graceMs` or longer ago, on the
   * database's clock (the one putBlobs stamps them with), all on the server: no body and no ref
   * comes back, only how many blobs the session referenced and how many were deleted.
   */
  | { kind: "collect-session-blobs"; sessionId: string; graceMs: number }
  /** Delete the session's events, runs, index rows and counter row; returns the counts. */
  | { kind: "delete-session"; sessionId: string }
  /**
   * One page of `collectBlobs` (see collectBlobsPage): of the first `limit` blobs whose ref
   * sorts after `after` (all blobs when undefined), in key order, delete those last touched
   * `graceMs` or longer ago on the database's clock that no existing session references (a
   * blob_refs row counts only while its session has its `sessions` row), each condition
   * checked again by the delete itself, and the blob_refs rows of the blobs deleted (all of
   * sessions that are gone). Returns a `BlobPage`; no blob content comes back.
   * `dryRun`: the same blobs found, counted with their stored bytes, nothing deleted or locked;
   * the claims of the sessions in `asIfDeleted` (a dry run's only, else empty) count as gone.
   */
  | {
      kind: "collect-blobs";
      after: string | undefined;
      limit: number;
      graceMs: number;
      dryRun: boolean;
      asIfDeleted: string[];
    }
  /** Insert (`created`) or update the run's head row. */
  | {
      kind: "write-head";
      sessionId: string;
      runId: string;
      head: RunHead;
      created: boolean;
      parentRunId: string | null;
      startedAt: string;
    };

export type WriteProgram<T> = Generator<WriteStep, T, unknown>;

/** What one `collect-blobs` step saw and did. */
export interface BlobPage {
  /** Blobs in the page (at most its `limit`): fewer means it reached the last blob. */
  examined: number;
  /** The page's last ref, where the next page starts; undefined when the page was empty. */
  last: string | undefined;
  /** Blobs deleted, or (dry run) that would be. */
  deleted: number;
  /** Dry run: the stored bytes of the blobs that would be deleted (0 otherwise). */
  bytes: number;
}

/**
 * Blobs per `collectBlobs` transaction: the locks a page takes (the rows it deletes, and on
 * SQLite the database's write lock) are held for a few hundred index lookups at most, so
 * writers wait no longer than for an ordinary append, however many blobs the store holds.
 */
export const BLOBS_PER_PAGE = 500;

/** Yields one step and returns its result, typed by the caller. */
function* step<T>(value: WriteStep): Generator<WriteStep, T, unknown> {
  return (yield value) as T;
}

/** Drives a program whose steps complete synchronously (SQLite). */
export function runSync<T>(program: WriteProgram<T>, execute: (step: WriteStep) => unknown): T {
  let next = program.next();
  while (!next.done) next = program.next(execute(next.value));
  return next.value;
}

/** Drives a program whose steps are asynchronous (PostgreSQL, MySQL). */
export async function runAsync<T>(
  program: WriteProgram<T>,
  execute: (step: WriteStep) => Promise<unknown>,
): Promise<T> {
  let next = program.next();
  while (!next.done) next = program.next(await execute(next.value));
  return next.value;
}

function* commit(
  sessionId: string,
  runId: string,
  planned: PlannedEvent[],
  head: RunHead,
  created: boolean,
  now: string,
  blobs: BlobRow[],
): WriteProgram<LedgerEvent[]> {
  const last = yield* step<number>({
    kind: "reserve-cursors",
    sessionId,
    count: planned.length,
    now,
  });
  const events = assignCursors(planned, last - planned.length + 1);
  yield* step({ kind: "insert-events", rows: events.map(eventRow) });
  // The blobs stored with the batch, after the session's counter row (deleteSession takes
  // that row before the blobs it collects: one lock order), and before their claims (a
  // collectBlobs page that holds a blob's row makes the claim wait, see SqlBackend.putBlobs).
  if (blobs.length > 0) yield* step({ kind: "put-blobs", blobs });
  // Only events that name blobs cost a statement: a plain append stays as it was.
  const refs = refsOf(events, blobs);
  if (refs.length > 0) yield* step({ kind: "index-refs", sessionId, refs });
  const first = events[0] as LedgerEvent;
  yield* step({
    kind: "write-head",
    sessionId,
    runId,
    head,
    created,
    parentRunId: first.parentRunId ?? null,
    startedAt: first.recordedAt,
  });
  return events;
}

/**
 * The append of §4: lock the head, look for the batch's ids, plan, then write.
 *
 * Fast path (`checkExisting: false`): when the run is exactly where the writer expects it, a
 * retry of an already stored batch is impossible (its events would have moved the head), so
 * the lookup of the batch's ids is skipped. An id used elsewhere in the session then fails the
 * insert on the unique index, and the store re-runs the program with the full check, which
 * reports `duplicate-event`. This saves a statement on every model and tool call.
 */
export function* appendProgram(
  request: ValidAppend,
  now: string,
  options: { checkExisting: boolean; blobs?: BlobRow[] } = { checkExisting: true },
): WriteProgram<AppendResult> {
  const { sessionId, runId } = request;
  const row = yield* step<HeadRow | undefined>({ kind: "lock-head", sessionId, runId });
  const head = row === undefined ? EMPTY_HEAD : headOf(row);
  const fast =
    !options.checkExisting && head.status === "running" && head.length === request.expectedSeq;
  const bodies = fast
    ? []
    : yield* step<string[]>({
        kind: "find-events",
        sessionId,
        eventIds: request.events.map((event) => event.eventId),
      });
  const plan = planAppend({ request, head, existing: bodies.map((body) => parseBody(body)), now });
  if (plan.kind === "deduplicated") return { events: plan.events, deduplicated: true };
  const events = yield* commit(
    sessionId,
    runId,
    plan.events,
    plan.head,
    !head.exists,
    now,
    options.blobs ?? [],
  );
  return { events, deduplicated: false };
}

/** A fork: copy a prefix of a run into a new run (new ids, new chain) in one transaction. */
export function* forkProgram(
  request: ForkRequest,
  now: string,
  newEventId: () => string,
): WriteProgram<AppendResult> {
  const { sessionId, runId, newRunId, uptoSeq } = request;
  const source = yield* step<HeadRow | undefined>({ kind: "lock-head", sessionId, runId });
  if (source === undefined) throw forkSourceMissing(request);
  if (uptoSeq > source.runLength) throw forkSourceMissing(request, source.runLength);
  const target = yield* step<HeadRow | undefined>({
    kind: "lock-head",
    sessionId,
    runId: newRunId,
  });
  if (target !== undefined) {
    throw forkTargetTaken(sessionId, newRunId, target.runLength);
  }
  const bodies = yield* step<string[]>({ kind: "read-run", sessionId, runId, uptoSeq });
  const plan = planFork({
    sessionId,
    newRunId,
    source: bodies.map((body) => parseBody(body)),
    newEventId,
    now,
  });
  const events = yield* commit(sessionId, newRunId, plan.events, plan.head, true, now, []);
  return { events, deduplicated: false };
}

/**
 * Retention (§4 deleteSession) in one transaction: lock the session's counter row (appends to
 * the session take it too, so no run can start meanwhile), refuse an open run, delete the
 * session's rows, then the blobs it referenced that no other session references and that are
 * older than the grace period (see store/retention.ts).
 */
export function* deleteSessionProgram(
  sessionId: string,
  graceMs: number,
  eventCount: number | undefined,
): WriteProgram<DeleteSessionResult> {
  const lastCursor = yield* step<number | undefined>({ kind: "lock-session", sessionId });
  if (lastCursor === undefined) throw sessionNotFound(sessionId);
  assertUnchanged(sessionId, eventCount, lastCursor);
  const open = yield* step<string[]>({ kind: "open-runs", sessionId });
  if (open.length > 0) throw openRunError(sessionId, open);
  const blobs = yield* step<{ refs: number; deleted: number }>({
    kind: "collect-session-blobs",
    sessionId,
    graceMs,
  });
  const counts = yield* step<{ events: number; runs: number }>({
    kind: "delete-session",
    sessionId,
  });
  return {
    sessionId,
    deletedEvents: counts.events,
    deletedRuns: counts.runs,
    deletedBlobs: blobs.deleted,
    keptBlobs: blobs.refs - blobs.deleted,
  };
}

/**
 * One page of retention across the store (§4 collectBlobs), in one transaction of its own:
 * the store runs pages in key order, each starting after the previous page's last ref, until
 * a page comes back short. Every page decides afresh, on the database's clock and on the rows
 * as they are when its delete runs, so a pass never holds locks across the table, and a blob
 * put or named while the pass runs is judged by the page that reaches it. Blobs added behind
 * the pass are younger than the grace period: the next pass gets them.
 */
export function* collectBlobsPage(
  after: string | undefined,
  graceMs: number,
  dryRun: boolean,
  asIfDeleted: string[],
): WriteProgram<BlobPage> {
  return yield* step<BlobPage>({
    kind: "collect-blobs",
    after,
    limit: BLOBS_PER_PAGE,
    graceMs,
    dryRun,
    asIfDeleted,
  });
}
