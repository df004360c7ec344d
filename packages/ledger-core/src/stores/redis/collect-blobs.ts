import type { Cluster, Redis } from "ioredis";
import { globLiteral, scanKeyPages } from "./key-scan.js";
import { blobKeys, idFromField, sessionKeys } from "./keys.js";
import { BLOB_CANDIDATE_SCRIPT, ORPHAN_BLOB_SCRIPT, runScript } from "./scripts.js";

/** A blob's content key under the store's prefix (its other keys end in `:sessions`, `:touched`). */
const BLOB_CONTENT_KEY = /^blob:\{([0-9a-f]{64})\}$/;

/** A blob put before the grace, and the members of its session set when it was looked at. */
interface Candidate {
  hex: string;
  members: string[];
}

/**
 * collectBlobs (§4): deletes every blob under `prefix` put before the grace that no existing
 * session references, with its session set, and returns how many it deleted. The blobs are
 * found by SCAN (each master of a Cluster) and handled `batchSize` at a time, each step of a
 * batch one round trip: BLOB_CANDIDATE_SCRIPT per blob (in its slot) skips the recent ones and
 * reads the session sets of the rest; the sessions named are looked up in their own slots (a
 * session exists while its log does); ORPHAN_BLOB_SCRIPT per blob whose sessions are all gone
 * re-checks the time and the set and deletes; then the deleted blobs leave the `puts` sets of
 * those gone sessions (the one other place that names them).
 *
 * Why a blob an existing session's event names is never deleted, although the existence
 * checks run outside the blob's script (other slots, on a Cluster other nodes; always masters,
 * as the store refuses a client that reads from replicas, so no check sees a lagging copy):
 * - A session added to the set after the look (an append indexes what it names, and a put for
 *   a session claims the blob, by SADD before they write) is not among the members the script
 *   is given: the script keeps the blob. So is one the check found existing.
 * - A member found gone can come back between the check and the script (a new session with
 *   that id, or the first append of one that only had a put). Its SADD then changes nothing,
 *   and the script may delete the blob under it. But the append that names the blob comes
 *   right after the writer's put of it, which stamps the blob's time: the script deletes it
 *   only if that put is older than the grace, i.e. if the writer took longer than the grace
 *   (less the one round trip from the check to the script) between its put and its append.
 *   That is the premise deleteSession rests on too: a blob past the grace is not about to be
 *   named. A blob put after the script is stored again, with a fresh time.
 * - A put racing the script (its SADD before, its SET NX after) stores the blob again with a
 *   fresh time; what it can lose is its session's claim (the set, or the `puts` entry this
 *   removes after the script). A claim only keeps a blob no event names yet; the writer's
 *   append, which names it, indexes it again.
 * Claims on the blobs kept are left alone: a put for a session that has not appended yet is
 * legitimate. Nothing outside `prefix` is scanned or written.
 */
export async function collectOrphanBlobs(
  client: Redis | Cluster,
  prefix: string,
  graceMs: number,
  batchSize: number,
): Promise<number> {
  let deleted = 0;
  const pending: string[] = [];
  for await (const keys of scanKeyPages(client, `${globLiteral(prefix)}blob:{*}`)) {
    for (const key of keys) {
      const hex = BLOB_CONTENT_KEY.exec(key.slice(prefix.length))?.[1];
      if (key.startsWith(prefix) && hex !== undefined) pending.push(hex);
    }
    // Batches fill across SCAN pages: in a database shared with other data, a page may
    // hold few of the store's blobs.
    while (pending.length >= batchSize)
      deleted += await collectBatch(client, prefix, pending.splice(0, batchSize), graceMs);
  }
  if (pending.length > 0) deleted += await collectBatch(client, prefix, pending, graceMs);
  return deleted;
}

/** One batch of blobs collected: four round trips, whatever its size. */
async function collectBatch(
  client: Redis | Cluster,
  prefix: string,
  hexes: string[],
  graceMs: number,
): Promise<number> {
  // SCAN may answer a key twice.
  const candidates = await findCandidates(client, prefix, [...new Set(hexes)], graceMs);
  if (candidates.length === 0) return 0;
  const gone = await goneSessions(client, prefix, candidates);
  const orphans = candidates.filter((candidate) =>
    candidate.members.every((member) => gone.has(member)),
  );
  const deleted = await deleteOrphans(client, prefix, orphans, graceMs);
  await forgetClaims(client, prefix, deleted);
  return deleted.length;
}

/** The blobs put before the grace, with their session sets (one script per blob, in its slot). */
async function findCandidates(
  client: Redis | Cluster,
  prefix: string,
  hexes: string[],
  graceMs: number,
): Promise<Candidate[]> {
  const replies = await Promise.all(
    hexes.map((hex) =>
      runScript(client, BLOB_CANDIDATE_SCRIPT, blobScriptKeys(prefix, hex), [graceMs]),
    ),
  );
  const candidates: Candidate[] = [];
  replies.forEach((reply, index) => {
    // 0 (or "0" on a client with stringNumbers): recent or gone; a list: a candidate.
    if (Array.isArray(reply))
      candidates.push({ hex: hexes[index] as string, members: reply.map(String) });
  });
  return candidates;
}

/** The members of the candidates' session sets whose sessions do not exist (no log). */
async function goneSessions(
  client: Redis | Cluster,
  prefix: string,
  candidates: Candidate[],
): Promise<Set<string>> {
  const members = [...new Set(candidates.flatMap((candidate) => candidate.members))];
  // One command per session: each session's keys are in its own slot.
  const exists = await Promise.all(
    members.map((member) => {
      const sessionId = sessionOf(member);
      // A member that is no session id is never taken for a gone session: it keeps the blob.
      if (sessionId === undefined) return 1;
      return client.exists(sessionKeys(prefix, sessionId).log);
    }),
  );
  return new Set(members.filter((_, index) => Number(exists[index]) === 0));
}

/** The orphans ORPHAN_BLOB_SCRIPT deleted (it re-checks each in its slot). */
async function deleteOrphans(
  client: Redis | Cluster,
  prefix: string,
  orphans: Candidate[],
  graceMs: number,
): Promise<Candidate[]> {
  const replies = await Promise.all(
    orphans.map((orphan) =>
      runScript(client, ORPHAN_BLOB_SCRIPT, blobScriptKeys(prefix, orphan.hex), [
        graceMs,
        ...orphan.members,
      ]),
    ),
  );
  return orphans.filter((_, index) => Number(replies[index]) === 1);
}

/**
 * Deleted blobs taken out of the `puts` sets of the gone sessions that claimed them (a put for
 * a session that never appended, or one that raced its deletion), which would otherwise stay
 * behind, and make a later session with that id collect the blob as its own.
 */
async function forgetClaims(
  client: Redis | Cluster,
  prefix: string,
  deleted: Candidate[],
): Promise<void> {
  const removals: Promise<number>[] = [];
  for (const blob of deleted)
    for (const member of blob.members) {
      // Every member of a deleted blob was found gone, so it is a session id.
      const sessionId = sessionOf(member);
      if (sessionId !== undefined)
        removals.push(client.srem(sessionKeys(prefix, sessionId).puts, `sha256:${blob.hex}`));
    }
  await Promise.all(removals);
}

/** The keys BLOB_CANDIDATE_SCRIPT and ORPHAN_BLOB_SCRIPT take, all in the blob's slot. */
function blobScriptKeys(prefix: string, hex: string): string[] {
  const keys = blobKeys(prefix, hex);
  return [keys.sessions, keys.content, keys.touched];
}

/** The session id of a session-set member (an `idField`), or undefined if it is none. */
function sessionOf(member: string): string | undefined {
  try {
    const id: unknown = idFromField(member);
    return typeof id === "string" ? id : undefined;
  } catch {
    return undefined;
  }
}
