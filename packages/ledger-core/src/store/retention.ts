import {
  assertKnownKeys,
  assertObjectArgument,
  type KnownKeys,
} from "../events/argument-checks.js";
import { ConflictError, InvalidArgumentError, NotFoundError } from "../events/errors.js";
import { assertId } from "../events/ids.js";
import { DEFAULT_BLOB_GRACE_MS } from "./blob.js";
import type {
  BlobTally,
  CollectBlobsOptions,
  CollectBlobsResult,
  DeleteSessionOptions,
} from "./event-store.js";

/**
 * Retention rules shared by every store's `deleteSession` (§4):
 * - only a closed session may go: a run still `running` is `invalid-argument` naming it;
 * - the blobs to consider are the ones the session referenced (its `evidenceRefs`, indexed
 *   per session at append time); one is deleted only if no other session references it AND
 *   it was not put (or re-put) within the grace period. The grace covers a writer in another
 *   session that has put a blob and not yet committed the event that references it; the
 *   recorder always puts right before it appends, and re-puts nothing it has not seen
 *   committed, so an event never names a blob that retention could have collected.
 * - put times and the grace are measured on one clock, the database's (the memory store's is
 *   its process's): writers and the deleting process may run on hosts whose clocks disagree.
 * `collectBlobs` applies the same rule to every blob of the store: a claim (a reference or a
 *   put for a session) counts only while its session exists, so it also collects what a
 *   deletion could not see, e.g. a blob put for a session after that session's deletion read
 *   its claims.
 */
export function retentionGraceMs(sessionId: string, options: DeleteSessionOptions = {}): number {
  assertId(sessionId, "$.sessionId");
  const grace = blobGraceMs(options);
  // `eventcount` for `eventCount` deleted a session that grew since it was listed.
  assertKnownKeys(options, DELETE_OPTIONS, "deleteSession");
  expectedEventCount(options);
  return grace;
}

const DELETE_OPTIONS: KnownKeys<DeleteSessionOptions> = {
  blobGraceMs: true,
  eventCount: true,
};
const COLLECT_OPTIONS: KnownKeys<CollectBlobsOptions> = {
  blobGraceMs: true,
  signal: true,
  dryRun: true,
  asIfDeleted: true,
};

/** The grace period of `deleteSession` or `collectBlobs` options, checked. */
export function blobGraceMs(options: DeleteSessionOptions | CollectBlobsOptions = {}): number {
  // JavaScript callers and parsed configs pass what the types forbid (null, an array).
  assertObjectArgument(options, "$.options", "retention options must be an object");
  const grace = options.blobGraceMs ?? DEFAULT_BLOB_GRACE_MS;
  if (!Number.isFinite(grace) || grace < 0)
    throw new InvalidArgumentError("$.blobGraceMs", "blobGraceMs must be a non-negative number");
  return grace;
}

/** `CollectBlobsOptions.dryRun`, checked (call after blobGraceMs, which checks the object). */
export function collectDryRun(options: CollectBlobsOptions = {}): boolean {
  // `dryrun` for `dryRun` deleted what was only to be counted.
  assertKnownKeys(options, COLLECT_OPTIONS, "collectBlobs");
  const dryRun = options.dryRun ?? false;
  // null too: a parsed config's `"dryRun": null` is not a choice to delete.
  if (typeof dryRun !== "boolean" || options.dryRun === null)
    throw new InvalidArgumentError("$.dryRun", "dryRun must be true or false");
  return dryRun;
}

/**
 * `CollectBlobsOptions.asIfDeleted`, checked (call after collectDryRun): an array of ids, and
 * only in a dry run, since a pass that ignored an existing session's claims would delete blobs
 * its events name. Empty when not given.
 */
export function collectAsIfDeleted(
  options: CollectBlobsOptions | undefined,
  dryRun: boolean,
): string[] {
  const ids: unknown = options?.asIfDeleted;
  if (ids === undefined) return [];
  if (!Array.isArray(ids))
    throw new InvalidArgumentError("$.asIfDeleted", "asIfDeleted must be an array of session ids");
  if (!dryRun)
    throw new InvalidArgumentError(
      "$.asIfDeleted",
      "asIfDeleted is only for a dry run (dryRun: true): a pass deletes only what no existing session claims",
    );
  // A bad id is invalid-event, as every id argument of the store is.
  for (const [index, id] of ids.entries()) assertId(id, `$.asIfDeleted[${index}]`);
  return [...new Set(ids as string[])];
}

/**
 * What a `collectBlobs` pass returns: `found` counts the blobs it deleted or, in a dry run, would
 * delete (then under `wouldDelete`, with their bytes); `stopped` when a signal ended it early.
 */
export function collectResult(
  dryRun: boolean,
  found: BlobTally,
  stopped: boolean,
): CollectBlobsResult {
  const result: CollectBlobsResult = dryRun
    ? { deletedBlobs: 0, wouldDelete: { ...found } }
    : { deletedBlobs: found.blobs };
  if (stopped) result.stopped = true;
  return result;
}

/** `DeleteSessionOptions.eventCount`, checked (undefined: delete whatever the session holds). */
export function expectedEventCount(options: DeleteSessionOptions = {}): number | undefined {
  const count = options.eventCount;
  if (count === undefined) return undefined;
  if (!Number.isSafeInteger(count) || count < 0)
    throw new InvalidArgumentError(
      "$.eventCount",
      "eventCount must be a non-negative integer (the session's eventCount from listSessions)",
    );
  return count;
}

/**
 * `conflict` for a `deleteSession` given `eventCount` that found the session holding `actual`
 * events (under the deletion's lock), or does nothing when that is the count expected.
 */
export function assertUnchanged(
  sessionId: string,
  expected: number | undefined,
  actual: number,
): void {
  if (expected !== undefined && actual !== expected)
    throw new ConflictError({ sessionId, expectedSeq: expected, actualSeq: actual });
}

export function sessionNotFound(sessionId: string): NotFoundError {
  return new NotFoundError(`session ${sessionId} not found`, { sessionId });
}

/** How many open runs a refusal names; the rest it counts. */
const NAMED_OPEN_RUNS = 5;

/**
 * `deleteSession`'s refusal of a session with runs still open: it names them sorted by code
 * unit, so every store names the same runs in the same order (each finds them in an order of its
 * own: a map's, a database collation's, a listing's).
 */
export function openRunError(
  sessionId: string,
  openRunIds: readonly string[],
): InvalidArgumentError {
  // sort() without a comparator orders strings by UTF-16 code unit.
  const sorted = [...openRunIds].sort();
  const named = sorted.slice(0, NAMED_OPEN_RUNS).map((runId) => JSON.stringify(runId));
  const more = sorted.length - named.length;
  const runs =
    sorted.length === 1
      ? `an open run ${named[0]}`
      : `${sorted.length} open runs: ${named.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
  return new InvalidArgumentError(
    "$.sessionId",
    `session ${sessionId} still has ${runs}: close (complete, fail or cancel) every run before deleting the session`,
  );
}

/**
 * Distinct evidence references of some events, and of the blobs stored with them (an append's
 * `blobs`, claimed by its session like the refs its events name).
 */
export function refsOf(
  events: { evidenceRefs?: string[] }[],
  blobs: readonly { ref: string }[] = [],
): string[] {
  const refs = new Set<string>();
  for (const event of events) for (const ref of event.evidenceRefs ?? []) refs.add(ref);
  for (const blob of blobs) refs.add(blob.ref);
  return [...refs];
}
