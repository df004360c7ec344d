import { createHash } from "node:crypto";
import { Cluster, Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import type { CollectBlobsOptions } from "../../store/event-store.js";
import { storedBytes } from "../../testing/conformance-retention.js";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { isCluster } from "./client.js";
import { blobKeys, idField, sessionKeys } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { BLOB_CANDIDATE_SCRIPT, ORPHAN_BLOB_SCRIPT, runScript } from "./scripts.js";
import { localClusterForTests } from "./testing/cluster-hooks.js";
import { localClusterUnavailable } from "./testing/local-cluster.js";
import { deleteKeys, freshPrefix, keysUnder } from "./testing/test-keys.js";

// collectBlobs at the level of Redis keys: what the conformance cases cannot show (SCAN pages
// and batches, other key prefixes in the same database, each master of a Cluster, the
// re-checks of the scripts when a writer comes between the look and the deletion).

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");
const noCluster = await localClusterUnavailable();

/** More blobs than one SCAN page (COUNT 1000) and than two batches (BLOBS_PER_ROUND_TRIP). */
const ORPHANS = 1200;
const CLAIMED = 300;

function masters(client: Redis | Cluster): Redis[] {
  return isCluster(client) ? client.nodes("master") : [client];
}

/** The content keys of the blobs under `prefix` (not their `:sessions` and `:touched` keys). */
async function blobsUnder(client: Redis | Cluster, prefix: string): Promise<string[]> {
  return (await keysUnder(client, prefix)).filter((key) =>
    /^blob:\{[0-9a-f]{64}\}$/.test(key.slice(prefix.length)),
  );
}

/**
 * A store under `prefix` with ORPHANS blobs put without a session, CLAIMED put for a session
 * that never appended, and blobs an existing session names or had put for it: all but the last
 * are collected, with the right count, and the gone session's `puts` set goes with them.
 */
async function checkCollectsMany(client: Redis | Cluster, prefix: string): Promise<void> {
  const store = new RedisEventStore({ client, keyPrefix: prefix });
  await store.init();
  const contents = (label: string, count: number) =>
    Array.from({ length: count }, (_, index) => `${label} ${index} ${prefix}`);
  const collectable = [...contents("orphan", ORPHANS), ...contents("claimed", CLAIMED)];
  await store.putBlobs(contents("orphan", ORPHANS));
  await store.putBlobs(contents("claimed", CLAIMED), { sessionId: "never-appended" });
  const named = await store.putBlobs(contents("named", 3));
  const putForKeeper = await store.putBlobs(contents("put for keeper", 2), {
    sessionId: "keeper",
  });
  await store.append({
    sessionId: "keeper",
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started", evidenceRefs: named }],
  });
  expect(await blobsUnder(client, prefix)).toHaveLength(ORPHANS + CLAIMED + 5);
  // On a Cluster, the blobs are spread over the masters: each must be scanned.
  for (const master of masters(client))
    expect((await blobsUnder(master, prefix)).length).toBeGreaterThan(100);

  // A dry run counts, over the same pages and batches, what the pass then deletes.
  const before = await keysUnder(client, prefix);
  expect(await store.collectBlobs({ blobGraceMs: 0, dryRun: true })).toEqual({
    deletedBlobs: 0,
    wouldDelete: { blobs: ORPHANS + CLAIMED, bytes: storedBytes(collectable) },
  });
  expect(await keysUnder(client, prefix)).toEqual(before);
  expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({
    deletedBlobs: ORPHANS + CLAIMED,
  });
  const kept = [...named, ...putForKeeper].map((ref) => blobKeys(prefix, ref.slice(7)).content);
  expect(await blobsUnder(client, prefix)).toEqual(kept.sort());
  // The gone session's claims went with the blobs; the keeper's stay.
  expect(await client.exists(sessionKeys(prefix, "never-appended").puts)).toBe(0);
  expect((await client.smembers(sessionKeys(prefix, "keeper").puts)).sort()).toEqual(
    [...putForKeeper].sort(),
  );
  // No `:sessions` or `:touched` key of a deleted blob is left behind.
  const blobLeftovers = (await keysUnder(client, prefix)).filter((key) =>
    key.startsWith(`${prefix}blob:`),
  );
  expect(blobLeftovers).toHaveLength(kept.length * 3);
  expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
  await store.close();
}

/**
 * Session sets left with no blob: appends that named a blob never put, and failed (a stale
 * position) after the store had indexed the name. Once the session is deleted, nothing but
 * collectBlobs looks at the set (the session's log never named the blob): it goes, uncounted;
 * a set naming a session that exists stays.
 */
async function checkCollectsLeftSets(client: Redis | Cluster, prefix: string): Promise<void> {
  const store = new RedisEventStore({ client, keyPrefix: prefix });
  await store.init();
  const missing = (label: string) => `sha256:${createHash("sha256").update(label).digest("hex")}`;
  const leftByGone = missing(`never put, named by a gone session ${prefix}`);
  const leftByLive = missing(`never put, named by a live session ${prefix}`);
  const setOf = (ref: string) => blobKeys(prefix, ref.slice(7)).sessions;
  for (const [sessionId, ref] of [
    ["gone", leftByGone],
    ["live", leftByLive],
  ] as const) {
    await store.append({
      sessionId,
      runId: "r",
      expectedSeq: 0,
      events: [{ type: "run.started" }],
    });
    // A claim on a blob never put, which the session's log does not name: what a refused
    // append leaves on a Cluster (its index goes ahead of its script, on other nodes), or
    // an earlier version of the store on one server.
    await client.sadd(setOf(ref), idField(sessionId));
  }
  await store.append({
    sessionId: "gone",
    runId: "r",
    expectedSeq: 1,
    events: [{ type: "run.completed" }],
  });
  await store.deleteSession("gone", { blobGraceMs: 0 });
  expect(await client.smembers(setOf(leftByGone))).toEqual([idField("gone")]);

  const kept = await store.putBlob(`kept, named by the live session ${prefix}`, {
    sessionId: "live",
  });
  // A set with no blob is not a blob: a dry run counts none, and leaves it.
  expect(await store.collectBlobs({ blobGraceMs: 0, dryRun: true })).toEqual({
    deletedBlobs: 0,
    wouldDelete: { blobs: 0, bytes: 0 },
  });
  expect(await client.exists(setOf(leftByGone))).toBe(1);
  expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
  expect(await client.exists(setOf(leftByGone))).toBe(0);
  expect(await client.smembers(setOf(leftByLive))).toEqual([idField("live")]);
  expect(await client.smembers(setOf(kept))).toEqual([idField("live")]);
  expect((await store.getBlob(kept)).length).toBeGreaterThan(0);
  expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 0 });
  await store.close();
}

/** A store under `prefix` with a few orphan blobs; what it returns reads its keys and values. */
async function neighbour(client: Redis | Cluster, prefix: string): Promise<() => Promise<unknown>> {
  const store = new RedisEventStore({ client, keyPrefix: prefix });
  await store.init();
  await store.putBlobs(Array.from({ length: 20 }, (_, index) => `neighbour ${index}`));
  await store.putBlob("claimed by a neighbour's session that never appended", {
    sessionId: "never-appended",
  });
  await store.close();
  return async () => {
    const keys = await keysUnder(client, prefix);
    const values = await Promise.all(keys.map((key) => client.dumpBuffer(key)));
    return keys.map((key, index) => [key, values[index]?.toString("hex")]);
  };
}

describe.skipIf(!available)("RedisEventStore.collectBlobs on one server", () => {
  const prefixes: string[] = [];
  const admin = available ? new Redis(url) : undefined;
  const fresh = (label: string): string => {
    const prefix = freshPrefix(label);
    prefixes.push(prefix);
    return prefix;
  };

  afterAll(async () => {
    admin?.disconnect();
    for (const prefix of prefixes) await deleteKeys(url, prefix);
  });

  it("collects more blobs than a SCAN page and a batch, counted, and leaves other prefixes' keys alone", async () => {
    const client = admin as Redis;
    const prefix = fresh("many");
    // Another ledger in the same database, and one whose prefix extends this one's.
    const others = await Promise.all(
      [fresh("other"), `${prefix}inner:`].map((other) => neighbour(client, other)),
    );
    const before = await Promise.all(others.map((snapshot) => snapshot()));
    await checkCollectsMany(client, prefix);
    expect(await Promise.all(others.map((snapshot) => snapshot()))).toEqual(before);
  }, 60_000);

  it("deletes session sets left with no blob once every session they name is gone, uncounted, and keeps the rest", async () => {
    await checkCollectsLeftSets(admin as Redis, fresh("left-sets"));
  });

  it("the deletion script keeps a blob that a session came to reference, or that was put again, after the look", async () => {
    const client = admin as Redis;
    const prefix = fresh("recheck");
    const store = new RedisEventStore({ client, keyPrefix: prefix });
    await store.init();
    const ref = await store.putBlob("looked at, then referenced");
    const keys = blobKeys(prefix, ref.slice(7));
    const scriptKeys = [keys.sessions, keys.content, keys.touched];
    const look = (kind = "blob") => runScript(client, BLOB_CANDIDATE_SCRIPT, scriptKeys, [0, kind]);
    const collect = (graceMs: number, gone: string[]) =>
      runScript(client, ORPHAN_BLOB_SCRIPT, scriptKeys, [graceMs, ref, ...gone]);

    expect(await look()).toEqual([]);
    // An append indexes the blob (its SADD comes before its script) after the look.
    await client.sadd(keys.sessions, idField("appending"));
    expect(await collect(0, [])).toBe(0);
    expect(await look()).toEqual([idField("appending")]);
    // Its session set is looked at for itself only when the blob is gone.
    expect(await look("set")).toBe(0);
    // The session was found gone, and its writer then puts the blob again before naming it.
    await store.putBlob("looked at, then referenced");
    expect(await collect(60_000, [idField("appending")])).toBe(0);
    expect(await client.exists(keys.content, keys.sessions, keys.touched)).toBe(3);
    // Nothing came between: the blob, its time and its session set go.
    expect(await collect(0, [idField("appending")])).toBe(1);
    expect(await client.exists(keys.content, keys.sessions, keys.touched)).toBe(0);
    await store.close();
  });

  it("a dry run counts a blob once when SCAN answers its key twice", async () => {
    // SCAN may answer a key again (the server rehashes its keyspace while it grows): a pass
    // deletes each blob once anyway, a dry run must count it once too.
    const prefix = fresh("scan-twice");
    type Scan = (...args: unknown[]) => Promise<[string, string[]]>;
    const client = new Redis(url);
    const scan = client.scan.bind(client) as Scan;
    (client as unknown as { scan: Scan }).scan = async (...args) => {
      const [next, keys] = await scan(...args);
      return [next, [...keys, ...keys]];
    };
    const store = new RedisEventStore({ client, keyPrefix: prefix });
    await store.init();
    // More keys, seen twice, than a batch takes (BLOBS_PER_ROUND_TRIP): some are seen again in
    // the next batch.
    const contents = Array.from({ length: 300 }, (_, index) => `orphan ${index} ${prefix}`);
    await store.putBlobs(contents);
    expect(await store.collectBlobs({ blobGraceMs: 0, dryRun: true })).toEqual({
      deletedBlobs: 0,
      wouldDelete: { blobs: 300, bytes: storedBytes(contents) },
    });
    expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 300 });
    await store.close();
    client.disconnect();
  });

  it("refuses bad options before any I/O, and reports an unreachable server as store-unavailable with the driver error", async () => {
    const offline = new RedisEventStore({ url: "redis://127.0.0.1:1", keyPrefix: fresh("off") });
    await expect(
      offline.collectBlobs(null as unknown as CollectBlobsOptions),
    ).rejects.toMatchObject({ code: "invalid-argument", path: "$.options" });
    const error = await offline.collectBlobs().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "store-unavailable" });
    expect((error as Error).cause).toBeInstanceOf(Error);
    await offline.close();
  });
});

describe.skipIf(noCluster !== undefined)("RedisEventStore.collectBlobs on Redis Cluster", () => {
  const local = localClusterForTests();

  it("scans every master: collects more blobs than a page and a batch, counted, and leaves another prefix alone", async () => {
    const client = local.client();
    const prefix = freshPrefix("cluster-many");
    const other = await neighbour(client, freshPrefix("cluster-other"));
    const before = await other();
    await checkCollectsMany(client, prefix);
    expect(await other()).toEqual(before);
  }, 60_000);

  it("deletes session sets left with no blob on each master", async () => {
    await checkCollectsLeftSets(local.client(), freshPrefix("cluster-left-sets"));
  });

  it("finds the masters of a Cluster client not connected yet (lazyConnect) when collectBlobs is its first call", async () => {
    const prefix = freshPrefix("cluster-lazy");
    const writer = new RedisEventStore({ client: local.client(), keyPrefix: prefix });
    await writer.init();
    await writer.putBlobs(Array.from({ length: 30 }, (_, index) => `lazy ${index}`));
    const lazy = new Cluster(local.cluster().nodes, { lazyConnect: true });
    try {
      const store = new RedisEventStore({ client: lazy, keyPrefix: prefix });
      expect(await store.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 30 });
    } finally {
      lazy.disconnect();
    }
  });
});
