import type { Cluster, Redis } from "ioredis";
import type { BlobTally } from "../../store/event-store.js";
import { stopBeforeNextPage } from "../../store/stop-signal.js";
import { isCluster } from "./client.js";
import { globLiteral, scanKeyPages } from "./key-scan.js";
import { blobKeys, blobScriptKeys, idFromField, sessionKeys } from "./keys.js";
import { BLOB_CANDIDATE_SCRIPT, ORPHAN_BLOB_SCRIPT, runScript } from "./scripts.js";

/**
 * A blob's content key, or its session set's, under the store's prefix (its time key ends in
 * `:touched`, and goes with one of them).
 */
const BLOB_KEY = /^blob:\{([0-9a-f]{64})\}(:sessions)?$/;

/**
 * A blob's key that SCAN found: its content ("blob"), or its session set ("set"), which is looked
 * at for itself only when no content is left beside it.
 */
interface Found {
  hex: string;
  kind: "blob" | "set";
}

/** A blob put before the grace (or a set left with none), and its set's members at the look. */
interface Candidate {
  hex: string;
  kind: Found["kind"];
  members: string[];
}

/** How a pass runs: the grace, blobs per batch, its stop signal, and whether it only counts. */
interface CollectPass {
  graceMs: number;
  batchSize: number;
  signal: AbortSignal | undefined;
  dryRun: boolean;
  /** A dry run's sessions counted as deleted (asIfDeleted): their claims are not looked at. */
  asIfDeleted: ReadonlySet<string>;
}

/**
 * collectBlobs (§4): deletes every blob under `prefix` put before the grace that no existing
 * session references, with its session set, and returns how many it deleted. The blobs are
 * found by SCAN (each master of a Cluster) and handled `batchSize` at a time, each step of a
 * batch one round trip: BLOB_CANDIDATE_SCRIPT per blob (in its slot) skips the recent ones and
 * reads the session sets of the rest; the sessions named are looked up in their own slots (a
 * session exists while its log does); ORPHAN_BLOB_SCRIPT per blob whose sessions are all gone
 * re-checks the time and the set and deletes, and the deleted blobs leave the `puts` sets of
 * those gone sessions (the one other place that names them): in that script on one server,
 * after it on a Cluster (forgetClaims, up to three more round trips).
 *
 * Why a blob an existing session's event names is never deleted, although the existence
 * checks run outside the blob's script (other slots, on a Cluster other nodes; always masters,
 * as the store refuses a client that reads from replicas, so no check sees a lagging copy):
 * - A session added to the set after the look (an append indexes what it names, and a put for
 *   a session claims the blob, by SADD: in the append's own script on one server, before it on
 *   a Cluster) is not among the members the script is given: the script keeps the blob. So is
 *   one the check found existing.
 * - A member found gone can come back between the check and the script (a new session with
 *   that id, or the first append of one that only had a put). Its SADD then changes nothing,
 *   and the script may delete the blob under it. But the append that names the blob comes
 *   right after the writer's put of it (on one server, an append that carries it is that
 *   put), which stamps the blob's time: the script deletes it only if that put is older than
 *   the grace, i.e. if the writer took longer than the grace (less the one round trip from the
 *   check to the script) between its put and its append.
 *   That is the premise deleteSession rests on too: a blob past the grace is not about to be
 *   named. A blob put after the script is stored again, with a fresh time.
 * - A put claims the blob in the script that stores it, so the script sees the put whole or
 *   not at all; a put after it stores the blob again with a fresh time.
 * - The deleted blobs leave the `puts` sets of their gone claimants (below, forgetClaims), and a
 *   put for a session of the same id (the session comes back) must keep its entry there: it is
 *   how that session's deleteSession finds a blob its events never name. Removed behind such a
 *   put, the entry left the blob stored and claimed by the session but unlisted, and the
 *   session's deletion missed it. On one server ORPHAN_BLOB_SCRIPT takes the entries out itself
 *   and PUT_BLOB_SCRIPT writes its entry itself, so each sees the other whole or not at all. On
 *   a Cluster the `puts` sets live in the sessions' slots: a put lists the blob only after its
 *   script has stored and claimed it, and forgetClaims, after taking an entry out, looks at the
 *   blob's session set again and puts the entry back if the session claims the blob by then.
 *   An entry a put added before the removal belongs to a put whose script ran before it, so
 *   before the look, which sees the put's claim unless the blob was deleted with it (a claim
 *   goes only with its blob, or with its session).
 * Claims on the blobs kept are left alone: a put for a session that has not appended yet is
 * legitimate. A session set left with no blob (an append that named a blob never put, or on a
 * Cluster one that failed after indexing it, in a session deleted since) goes by the same rule: it is deleted
 * when every session it names is gone; it is not counted as a blob. Nothing outside `prefix`
 * is scanned or written.
 *
 * An aborted `signal` stops it before its next SCAN page or batch (`stopped`): each blob's
 * deletion is its own script, and a batch is counted only once it has run whole, so `found`
 * is what is gone.
 *
 * `dryRun`: the same look, then the orphans are counted with their stored bytes instead of
 * deleted; nothing is written.
 */
export async function collectOrphanBlobs(
  client: Redis | Cluster,
  prefix: string,
  pass: CollectPass,
): Promise<{ found: BlobTally; stopped: boolean }> {
  const { batchSize, signal } = pass;
  const found: BlobTally = { blobs: 0, bytes: 0 };
  const pending: Found[] = [];
  // A dry run's blobs counted so far: SCAN may answer a key again in a later batch, which a
  // pass deletes once anyway but a count would take twice.
  const counted = new Set<string>();
  const batch = async (keys: Found[]) => {
    const one = await collectBatch(client, prefix, keys, pass, counted);
    found.blobs += one.blobs;
    found.bytes += one.bytes;
  };
  for await (const keys of scanKeyPages(client, `${globLiteral(prefix)}blob:{*`)) {
    if (await stopBeforeNextPage(signal)) return { found, stopped: true };
    for (const key of keys) {
      const match = key.startsWith(prefix) ? BLOB_KEY.exec(key.slice(prefix.length)) : null;
      if (match !== null)
        pending.push({ hex: match[1] as string, kind: match[2] === undefined ? "blob" : "set" });
    }
    // Batches fill across SCAN pages: in a database shared with other data, a page may
    // hold few of the store's blobs.
    while (pending.length >= batchSize) {
      if (await stopBeforeNextPage(signal)) return { found, stopped: true };
      await batch(pending.splice(0, batchSize));
    }
  }
  if (pending.length > 0) {
    if (await stopBeforeNextPage(signal)) return { found, stopped: true };
    await batch(pending);
  }
  return { found, stopped: false };
}

/**
 * One batch of blobs collected: four round trips, whatever its size. A dry run stops once it
 * knows the orphans, and reads the stored size of those that are blobs (a set left with none
 * is not counted as a blob): three round trips, nothing written.
 */
async function collectBatch(
  client: Redis | Cluster,
  prefix: string,
  found: Found[],
  pass: CollectPass,
  counted: Set<string>,
): Promise<BlobTally> {
  const candidates = await findCandidates(client, prefix, unique(found), pass.graceMs);
  if (candidates.length === 0) return { blobs: 0, bytes: 0 };
  const gone = await goneSessions(client, prefix, candidates, pass.asIfDeleted);
  const orphans = candidates.filter((candidate) =>
    candidate.members.every((member) => gone.has(member)),
  );
  if (pass.dryRun) return storedSizes(client, prefix, orphans, counted);
  const { deleted, cleared } = await deleteOrphans(client, prefix, orphans, pass.graceMs);
  await forgetClaims(client, prefix, [...deleted, ...cleared]);
  return { blobs: deleted.length, bytes: 0 };
}

/**
 * How many of the orphans are blobs still stored and not `counted` before (then added to it),
 * and their stored bytes (STRLEN, each in its slot).
 */
async function storedSizes(
  client: Redis | Cluster,
  prefix: string,
  orphans: Candidate[],
  counted: Set<string>,
): Promise<BlobTally> {
  const blobs = orphans.filter((orphan) => orphan.kind === "blob" && !counted.has(orphan.hex));
  const sizes = await Promise.all(
    blobs.map((blob) => client.strlen(blobKeys(prefix, blob.hex).content)),
  );
  const found: BlobTally = { blobs: 0, bytes: 0 };
  sizes.forEach((size, index) => {
    if (Number(size) === 0) return;
    counted.add((blobs[index] as Candidate).hex);
    found.blobs++;
    found.bytes += Number(size);
  });
  return found;
}

/** Each blob once: SCAN may answer a key twice, and a blob's content covers its set. */
function unique(found: Found[]): Found[] {
  const byHex = new Map<string, Found>();
  for (const one of found) if (byHex.get(one.hex)?.kind !== "blob") byHex.set(one.hex, one);
  return [...byHex.values()];
}

/** The blobs put before the grace (and the sets left with none), with their session sets. */
async function findCandidates(
  client: Redis | Cluster,
  prefix: string,
  found: Found[],
  graceMs: number,
): Promise<Candidate[]> {
  // One script per key, in its blob's slot.
  const replies = await Promise.all(
    found.map(({ hex, kind }) =>
      runScript(client, BLOB_CANDIDATE_SCRIPT, blobScriptKeys(prefix, hex), [graceMs, kind]),
    ),
  );
  const candidates: Candidate[] = [];
  replies.forEach((reply, index) => {
    // 0 (or "0" on a client with stringNumbers): nothing to collect; a list: a candidate.
    if (Array.isArray(reply)) {
      const { hex, kind } = found[index] as Found;
      candidates.push({ hex, kind, members: reply.map(String) });
    }
  });
  return candidates;
}

/** The members of the candidates' session sets whose sessions do not exist (no log). */
async function goneSessions(
  client: Redis | Cluster,
  prefix: string,
  candidates: Candidate[],
  asIfDeleted: ReadonlySet<string>,
): Promise<Set<string>> {
  const members = [...new Set(candidates.flatMap((candidate) => candidate.members))];
  // One command per session: each session's keys are in its own slot.
  const exists = await Promise.all(
    members.map((member) => {
      const sessionId = sessionOf(member);
      // A member that is no session id is never taken for a gone session: it keeps the blob.
      if (sessionId === undefined) return 1;
      if (asIfDeleted.has(sessionId)) return 0;
      return client.exists(sessionKeys(prefix, sessionId).log);
    }),
  );
  return new Set(members.filter((_, index) => Number(exists[index]) === 0));
}

/**
 * The orphans ORPHAN_BLOB_SCRIPT deleted (it re-checks each in its slot), and those whose blob
 * was already gone, of which it deleted the keys left (a set with no blob).
 */
async function deleteOrphans(
  client: Redis | Cluster,
  prefix: string,
  orphans: Candidate[],
  graceMs: number,
): Promise<{ deleted: Candidate[]; cleared: Candidate[] }> {
  // On one server the script also takes the blob out of the gone sessions' `puts` sets.
  const puts = (orphan: Candidate) =>
    isCluster(client) ? [] : orphan.members.map((member) => putsOf(prefix, member));
  const replies = await Promise.all(
    orphans.map((orphan) =>
      runScript(
        client,
        ORPHAN_BLOB_SCRIPT,
        [...blobScriptKeys(prefix, orphan.hex), ...puts(orphan)],
        [graceMs, `sha256:${orphan.hex}`, ...orphan.members],
      ),
    ),
  );
  return {
    deleted: orphans.filter((_, index) => Number(replies[index]) === 1),
    cleared: orphans.filter((_, index) => Number(replies[index]) === 2),
  };
}

/**
 * On a Cluster, deleted blobs (and sets left with none) taken out of the `puts` sets of the gone
 * sessions that claimed them (a put for a session that never appended, or one that raced its
 * deletion), which would otherwise stay behind, and make a later session with that id collect
 * the blob as its own. (On one server ORPHAN_BLOB_SCRIPT did it.) Each entry removed is put
 * back if the blob's session set names the session again by then: a put for a session of that
 * id came after the deletion, and may have listed the blob before the removal (see above).
 */
async function forgetClaims(
  client: Redis | Cluster,
  prefix: string,
  collected: Candidate[],
): Promise<void> {
  if (!isCluster(client) || collected.length === 0) return;
  const entries = collected.flatMap((blob) =>
    blob.members.map((member) => ({ hex: blob.hex, member, puts: putsOf(prefix, member) })),
  );
  const removed = await Promise.all(
    entries.map((entry) => client.srem(entry.puts, `sha256:${entry.hex}`)),
  );
  const taken = entries.filter((_, index) => Number(removed[index]) === 1);
  const claimed = await Promise.all(
    taken.map((entry) => client.sismember(blobKeys(prefix, entry.hex).sessions, entry.member)),
  );
  await Promise.all(
    taken
      .filter((_, index) => Number(claimed[index]) === 1)
      .map((entry) => client.sadd(entry.puts, `sha256:${entry.hex}`)),
  );
}

/**
 * The `puts` set of the session a member of a deleted blob's set names: each was found gone,
 * and goneSessions finds only session ids gone.
 */
function putsOf(prefix: string, member: string): string {
  return sessionKeys(prefix, sessionOf(member) as string).puts;
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
