import type { Cluster, Redis } from "ioredis";
import { globLiteral, scanKeyPages } from "./key-scan.js";
import { blobKeys, sessionMember, sessionsKey } from "./keys.js";
import { logRefs } from "./log-refs.js";

/**
 * Layout 1 kept a blob's content (`blob:<hex>`), its reference set (`blob-sessions:<hex>`) and
 * its put time (one sorted set, `blob-touched`) in three different slots, so on Redis Cluster
 * putBlob's MULTI and retention's script were refused (CROSSSLOT). Layout 2 gives the three
 * keys of a blob the blob's hash tag. Everything else is unchanged.
 */
function legacyBlobKeys(prefix: string, hex: string) {
  return {
    content: `${prefix}blob:${hex}`,
    sessions: `${prefix}blob-sessions:${hex}`,
    touched: `${prefix}blob-touched`,
  };
}

/** Every key matching `pattern` (see scanKeyPages), in one list. */
async function scanKeys(client: Redis | Cluster, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const page of scanKeyPages(client, pattern)) keys.push(...page);
  return keys;
}

/**
 * Moves every layout-1 blob under `prefix` to its layout-2 keys. Idempotent, so processes that
 * start at once, or one that died half way, can all run it: content and time are copied with
 * SET NX (a blob put since under layout 2 keeps its own), references are added to the new set,
 * and only then are the old keys removed; then every stored event's refs are indexed (see
 * indexStoredRefs). Writers of the old version must be stopped first:
 * what they write after it ran is not moved.
 */
export async function migrateBlobsFromLayout1(
  client: Redis | Cluster,
  prefix: string,
): Promise<void> {
  const hexes = new Set<string>();
  const literal = globLiteral(prefix);
  for (const [pattern, shape] of [
    [`${literal}blob:*`, /^blob:([0-9a-f]{64})$/],
    [`${literal}blob-sessions:*`, /^blob-sessions:([0-9a-f]{64})$/],
  ] as const) {
    for (const key of await scanKeys(client, pattern)) {
      const hex = shape.exec(key.slice(prefix.length))?.[1];
      if (hex !== undefined) hexes.add(hex);
    }
  }
  const touchedKey = legacyBlobKeys(prefix, "").touched;
  for (const hex of hexes) {
    const old = legacyBlobKeys(prefix, hex);
    const moved = blobKeys(prefix, hex);
    const content = await client.getBuffer(old.content);
    if (content !== null) await client.set(moved.content, content, "NX");
    const touched = await client.zscore(touchedKey, hex);
    if (touched !== null) await client.set(moved.touched, touched, "NX");
    const sessions = await client.smembers(old.sessions);
    if (sessions.length > 0) await client.sadd(moved.sessions, ...sessions);
    await client.del(old.content);
    await client.del(old.sessions);
    await client.zrem(touchedKey, hex);
  }
  // Times of blobs that have neither content nor references (a put that failed half way).
  const orphans = (await client.zrange(touchedKey, 0, -1)).filter((hex) => !hexes.has(hex));
  if (orphans.length > 0) await client.zrem(touchedKey, ...orphans);
  await indexStoredRefs(client, prefix);
}

/**
 * Adds every stored event's session to the reference set of each blob it names. Layout 1
 * was first written without reference sets (they came with blob retention, under the same
 * layout number): a blob that only such events name would otherwise look unreferenced, and
 * deleting any later session that names it would collect it. SADD makes this idempotent.
 */
async function indexStoredRefs(client: Redis | Cluster, prefix: string): Promise<void> {
  for (const meta of await scanKeys(client, `${globLiteral(prefix)}s:*:meta`)) {
    if (!/^s:\{[0-9a-f]{64}\}:meta$/.test(meta.slice(prefix.length))) continue;
    const session = await client.hget(meta, "sessionId");
    if (session === null) continue;
    const { refs } = await logRefs(client, `${meta.slice(0, -":meta".length)}:log`);
    for (const ref of refs) await client.sadd(blobKeys(prefix, ref.slice(7)).sessions, session);
  }
}

/** Members moved per ZADD, so one command stays small whatever the number of sessions. */
const SESSIONS_PER_COMMAND = 500;

/**
 * Layout 2 kept the index of sessions under `sessions`, each id as its UTF-16 code units
 * (big-endian), so that it listed ids in JavaScript's order. The SQL stores list them by code
 * point, which differs for characters above U+FFFF; layout 3 keeps the index under
 * `session-ids` in UTF-8, whose bytes sort by code point. The same bytes can be a UTF-16 id and
 * another UTF-8 id ("中" is 4E 2D, which is "N-"), so the new index is a new key. Idempotent,
 * like the blob move: processes that start at once, or one that died half way, all copy every
 * member (ZADD) and then delete the old key. Writers of the older version must be stopped first.
 */
export async function migrateSessionIndexFromLayout2(
  client: Redis | Cluster,
  prefix: string,
): Promise<void> {
  const legacy = `${prefix}sessions`;
  const members = await client.zrangeBuffer(legacy, 0, -1);
  for (let start = 0; start < members.length; start += SESSIONS_PER_COMMAND) {
    const ids = members
      .slice(start, start + SESSIONS_PER_COMMAND)
      .map((member) => Buffer.from(member).swap16().toString("utf16le"));
    await client.zadd(sessionsKey(prefix), ...ids.flatMap((id) => [0, sessionMember(id)]));
  }
  await client.del(legacy);
}
