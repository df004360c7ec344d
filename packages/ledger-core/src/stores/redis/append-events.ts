import { isoNow } from "../../events/clock.js";
import { ConflictError } from "../../events/errors.js";
import { EMPTY_HEAD, planAppend } from "../../store/append-plan.js";
import type { AppendRequest, AppendResult } from "../../store/event-store.js";
import { refsOf } from "../../store/retention.js";
import { type ValidAppend, validateAppend } from "../../store/validate.js";
import { submitAppendScript } from "./append-batches.js";
import type { ScriptBlobs } from "./append-call.js";
import { isCluster, unavailable } from "./client.js";
import { decodeSnapshot, type Snapshot } from "./codec.js";
import type { RunKeys, SessionKeys } from "./keys.js";
import { indexRefs, listPuts, putEncodedBlobs, storeBlobs } from "./put-blobs.js";
import { keysOf, rememberHead } from "./run-cache.js";
import { listIfUnlisted, listSession } from "./session-index.js";
import type { RedisStoreState } from "./store-state.js";
import { writePlan } from "./write-plan.js";

/** Script round trips one append may take when other writers move the run in between. */
export const MAX_ATTEMPTS = 4;

/** `RedisEventStore.append`. */
export async function appendEvents(
  state: RedisStoreState,
  request: AppendRequest,
): Promise<AppendResult> {
  const valid = validateAppend(request);
  const { session, run } = keysOf(state, valid.sessionId, valid.runId);
  try {
    const blobs = scriptBlobs(state, valid);
    // A Cluster holds the blob keys on other nodes, out of the script's reach: there the
    // blobs it carries are put (claimed by the session) and the blobs its events name are
    // indexed first, and a put or an index that failed fails the call before the append.
    // On one server the script stores them itself, only if it writes the events.
    if (blobs !== undefined && isCluster(state.client)) {
      const [stored] = await Promise.all([
        storeBlobs(state, blobs.carried, valid.sessionId),
        indexRefs(state, valid.sessionId, blobs.named),
      ]);
      // The session's list of the blobs put for it goes after their scripts (listPuts), in
      // the same round trip as the append's script: not one more.
      const [result] = await Promise.all([
        appendThroughScript(state, valid, session, run, undefined),
        listPuts(state, stored, valid.sessionId),
      ]);
      return result;
    }
    return await appendThroughScript(state, valid, session, run, blobs);
  } catch (error) {
    state.heads.delete(run.head);
    throw unavailable(error, "append", state.client);
  }
}

/** The blobs an append carries (each once) and the others its events name, if any. */
function scriptBlobs(state: RedisStoreState, valid: ValidAppend): ScriptBlobs | undefined {
  let named = refsOf(valid.events);
  if (valid.blobs.length === 0) {
    return named.length === 0 ? undefined : { prefix: state.prefix, carried: [], named };
  }
  const carried = [...new Map(valid.blobs.map((blob) => [blob.ref, blob])).values()];
  const refs = new Set(carried.map((blob) => blob.ref));
  named = named.filter((ref) => !refs.has(ref));
  return { prefix: state.prefix, carried, named };
}

/**
 * The blobs of an append stored outside its script, as `putBlobs` puts them and with the
 * reference index of the others it names: on a Cluster, and for a retry found already
 * written (`deduplicated`).
 */
async function putAndIndex(
  state: RedisStoreState,
  sessionId: string,
  blobs: ScriptBlobs,
): Promise<void> {
  await Promise.all([
    putEncodedBlobs(state, blobs.carried, sessionId),
    indexRefs(state, sessionId, blobs.named),
  ]);
}

/**
 * The append's script, with the blobs it stores (`blobs`: on one server) or none (on a
 * Cluster, where they were stored first).
 */
async function appendThroughScript(
  state: RedisStoreState,
  valid: ValidAppend,
  session: SessionKeys,
  run: RunKeys,
  blobs: ScriptBlobs | undefined,
): Promise<AppendResult> {
  // The hash chain needs sha256, which Lua lacks: plan in JS from a head we believe in,
  // and let the script check that the head is still that one before it writes.
  const cached = state.heads.get(run.head);
  let snapshot: Snapshot | undefined =
    cached !== undefined && cached.length === valid.expectedSeq && cached.status === "running"
      ? { head: cached, existing: [] }
      : valid.expectedSeq === 0
        ? { head: EMPTY_HEAD, existing: [] }
        : undefined;
  for (let attempt = 1; ; attempt++) {
    if (snapshot === undefined) {
      const reply = await submitAppendScript(state, session, run, "read", valid, undefined);
      snapshot = decodeSnapshot(reply);
    }
    const plan = planAppend({
      request: valid,
      head: snapshot.head,
      existing: snapshot.existing,
      now: isoNow(),
    });
    if (plan.kind === "deduplicated") {
      // The first try may have committed and then lost its connection before listing the
      // session: a retry is the only call left to list it.
      await listIfUnlisted(state, session, valid.sessionId);
      // The first try stored its blobs with its events, unless an earlier version of the
      // store wrote it (it put them ahead of its script, and that put could fail alone).
      if (blobs !== undefined) await putAndIndex(state, valid.sessionId, blobs);
      return { events: plan.events, deduplicated: true };
    }
    const outcome = await writePlan(state, session, run, valid, plan, snapshot.head, blobs);
    if (outcome.kind === "written") {
      rememberHead(state, run.head, plan.head);
      if (!outcome.listed) await listSession(state, session, valid.sessionId);
      return { events: outcome.events, deduplicated: false };
    }
    // Refused: another writer moved the run (or wrote one of these ids) between our view
    // and the script. Plan again on the script's own view: that yields the right answer
    // (deduplicated, duplicate-event, run-closed, conflict), or a write if only our
    // cached head was stale while the caller's expectedSeq is right.
    state.heads.delete(run.head);
    snapshot = outcome.snapshot;
    if (attempt >= MAX_ATTEMPTS) {
      throw new ConflictError({
        sessionId: valid.sessionId,
        runId: valid.runId,
        expectedSeq: valid.expectedSeq,
        actualSeq: snapshot.head.length,
      });
    }
  }
}
