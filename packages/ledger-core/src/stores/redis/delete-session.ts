import { StoreUnavailableError } from "../../events/errors.js";
import type {
  DeleteSessionOptions,
  DeleteSessionResult,
  RunSummary,
} from "../../store/event-store.js";
import {
  assertUnchanged,
  expectedEventCount,
  openRunError,
  retentionGraceMs,
  sessionNotFound,
} from "../../store/retention.js";
import { MAX_ATTEMPTS } from "./append-events.js";
import { unavailable } from "./client.js";
import {
  blobScriptKeys,
  idField,
  runKeys,
  sessionKeys,
  sessionMember,
  sessionsKey,
} from "./keys.js";
import { logRefs } from "./log-refs.js";
import { listRunSummaries } from "./read-events.js";
import { COLLECT_BLOB_SCRIPT, DELETE_SESSION_SCRIPT, runScript } from "./scripts.js";
import type { RedisStoreState } from "./store-state.js";

/** Blob scripts retention sends before it waits for their replies. */
export const BLOBS_PER_ROUND_TRIP = 500;

/** `RedisEventStore.deleteSession` (its comment says in what order, and why). */
export async function deleteStoredSession(
  state: RedisStoreState,
  sessionId: string,
  options: DeleteSessionOptions = {},
): Promise<DeleteSessionResult> {
  const graceMs = retentionGraceMs(sessionId, options);
  const eventCount = expectedEventCount(options);
  for (let attempt = 1; ; attempt++) {
    const runs = await listRunSummaries(state, sessionId);
    if (runs.length === 0) throw sessionNotFound(sessionId);
    const deleted = await deleteSessionKeys(state, sessionId, runs, eventCount);
    if (deleted !== undefined) return collectSessionBlobs(state, sessionId, deleted, graceMs);
    if (attempt >= MAX_ATTEMPTS)
      throw new StoreUnavailableError(
        `deleteSession ${sessionId}: the session kept changing while it was being deleted`,
      );
  }
}

/**
 * The session's keys deleted as `runs` (listed just before) and its log show them, or undefined
 * when the script finds either changed since. The session leaves the sessions index (another
 * slot) after its keys: a deletion killed in between leaves an index entry of no session, which
 * listSessions skips, never a session no listing finds (whose keys nothing would delete). An
 * append that made the session anew meanwhile lists it itself, or is listed again here.
 */
async function deleteSessionKeys(
  state: RedisStoreState,
  sessionId: string,
  listed: RunSummary[],
  eventCount: number | undefined,
): Promise<{ events: number; refs: string[]; runs: number } | undefined> {
  const session = sessionKeys(state.prefix, sessionId);
  const runs = listed.map((run) => runKeys(state.prefix, sessionId, run.runId));
  let logged: Awaited<ReturnType<typeof logRefs>>;
  try {
    logged = await logRefs(state.client, session.log);
  } catch (error) {
    throw unavailable(error, "deleteSession", state.client);
  }
  const { events } = logged;
  // The script deletes only a session still at `events` with these runs, all closed.
  assertUnchanged(sessionId, eventCount, events);
  const open = listed.filter((run) => run.status === "running").map((run) => run.runId);
  if (open.length > 0) throw openRunError(sessionId, open);
  try {
    const refs = [...new Set([...logged.refs, ...(await state.client.smembers(session.puts))])];
    const done = await runScript(
      state.client,
      DELETE_SESSION_SCRIPT,
      [
        session.meta,
        session.log,
        session.ids,
        session.runs,
        ...runs.flatMap((run) => [run.events, run.head]),
        session.puts,
      ],
      [events, ...runs.map((run) => run.runHash)],
    );
    // Changed, not deleted; or gone: another deleteSession was first (the next look finds
    // nothing).
    if (Number(done) === 0 || Number(done) === 2) return undefined;
    for (const run of runs) state.heads.delete(run.head);
    const index = sessionsKey(state.prefix);
    await state.client.zrem(index, sessionMember(sessionId));
    if ((await state.client.exists(session.meta)) === 1)
      await state.client.zadd(index, 0, sessionMember(sessionId));
    return { events, refs, runs: runs.length };
  } catch (error) {
    throw unavailable(error, "deleteSession", state.client);
  }
}

/** After the session's keys are gone: its blobs no other session references, collected. */
async function collectSessionBlobs(
  state: RedisStoreState,
  sessionId: string,
  deleted: { events: number; refs: string[]; runs: number },
  graceMs: number,
): Promise<DeleteSessionResult> {
  const { refs } = deleted;
  const member = idField(sessionId);
  let deletedBlobs = 0;
  try {
    // One script per blob (its keys carry the blob's own hash tag: a Cluster routes each to
    // its slot), sent a page at a time without waiting in between: one round trip per page,
    // not per blob.
    for (let at = 0; at < refs.length; at += BLOBS_PER_ROUND_TRIP) {
      const collected = await Promise.all(
        refs.slice(at, at + BLOBS_PER_ROUND_TRIP).map((ref) => {
          return runScript(
            state.client,
            COLLECT_BLOB_SCRIPT,
            blobScriptKeys(state.prefix, ref.slice(7)),
            [member, graceMs],
          );
        }),
      );
      for (const one of collected) deletedBlobs += Number(one);
    }
  } catch (error) {
    throw unavailable(error, "deleteSession", state.client);
  }
  return {
    sessionId,
    deletedEvents: deleted.events,
    deletedRuns: deleted.runs,
    deletedBlobs,
    keptBlobs: refs.length - deletedBlobs,
  };
}
