import { type Cluster, Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { SERVER_URLS, serverAvailable } from "../../testing/servers.js";
import { sessionKeys } from "./keys.js";
import { RedisEventStore } from "./redis-store.js";
import { ORPHAN_BLOB_SCRIPT } from "./scripts.js";
import { localClusterForTests } from "./testing/cluster-hooks.js";
import { localClusterUnavailable } from "./testing/local-cluster.js";
import { deleteKeys, freshPrefix } from "./testing/test-keys.js";

// collectBlobs deletes a blob whose claimants are all gone sessions, and takes it out of those
// sessions' `puts` sets. A put of the same blob for a session of the same id (the session
// comes back) that lands between the two must keep its `puts` entry: it is how the session's
// deleteSession finds a blob its events never name (README: "counts the blob as the session's
// from the moment it is put"). Lost, the blob outlives the session's deletion, stored and
// claimed by a gone session, until some later collectBlobs.
//
// The interleaving is made exact: the collecting store's client runs the put as soon as the
// deletion script's reply arrives, before collectBlobs goes on.

const url = SERVER_URLS.redis;
const available = await serverAvailable("redis");
const noCluster = await localClusterUnavailable();

/**
 * Runs `step` once, right after the client's first reply to ORPHAN_BLOB_SCRIPT (by EVALSHA, or
 * by EVAL when the server did not have the script yet).
 */
function afterOrphanScript(client: Redis | Cluster, step: () => Promise<unknown>): () => number {
  let runs = 0;
  for (const [command, name] of [
    ["evalsha", ORPHAN_BLOB_SCRIPT.sha],
    ["eval", ORPHAN_BLOB_SCRIPT.source],
  ] as const) {
    const original = client[command].bind(client) as (...args: unknown[]) => Promise<unknown>;
    Object.assign(client, {
      [command]: async (...args: unknown[]) => {
        const reply = await original(...args);
        if (args[0] === name && runs === 0) {
          runs++;
          await step();
        }
        return reply;
      },
    });
  }
  return () => runs;
}

async function checkPutBetweenDeletionAndCleanup(
  collectorClient: Redis | Cluster,
  writerClient: Redis | Cluster,
  prefix: string,
): Promise<void> {
  const collector = new RedisEventStore({ client: collectorClient, keyPrefix: prefix });
  const writer = new RedisEventStore({ client: writerClient, keyPrefix: prefix });
  await collector.init();
  const sessionId = "comes-back";
  const content = `put for a session, collected, put again for it ${prefix}`;
  // Put for a session that never appended: a gone session's claim, so an orphan.
  const ref = await writer.putBlob(content, { sessionId });
  const ranPut = afterOrphanScript(collectorClient, () => writer.putBlob(content, { sessionId }));

  expect(await collector.collectBlobs({ blobGraceMs: 0 })).toEqual({ deletedBlobs: 1 });
  expect(ranPut()).toBe(1);
  // The put after the deletion stored the blob again, for the session, and listed it.
  expect(new TextDecoder().decode(await writer.getBlob(ref))).toBe(content);
  expect(await writerClient.smembers(sessionKeys(prefix, sessionId).puts)).toEqual([ref]);

  // The session writes a run that never names the blob, and is deleted: the blob goes with it.
  await writer.append({
    sessionId,
    runId: "r",
    expectedSeq: 0,
    events: [{ type: "run.started" }, { type: "run.completed", payload: {} }],
  });
  expect(await writer.deleteSession(sessionId, { blobGraceMs: 0 })).toMatchObject({
    deletedBlobs: 1,
    keptBlobs: 0,
  });
  await expect(writer.getBlob(ref)).rejects.toMatchObject({ code: "not-found" });
}

describe.skipIf(!available)(
  "RedisEventStore.collectBlobs and a put for a gone session, on one server",
  () => {
    const prefixes: string[] = [];
    const clients: Redis[] = [];
    afterAll(async () => {
      for (const client of clients) client.disconnect();
      for (const prefix of prefixes) await deleteKeys(url, prefix);
    });

    it("a put that lands between the deletion of its blob and the cleanup of the claims keeps its `puts` entry", async () => {
      const prefix = freshPrefix("claims-race");
      prefixes.push(prefix);
      const [collector, writer] = [new Redis(url), new Redis(url)];
      clients.push(collector, writer);
      await checkPutBetweenDeletionAndCleanup(collector, writer, prefix);
    });
  },
);

describe.skipIf(noCluster !== undefined)(
  "RedisEventStore.collectBlobs and a put for a gone session, on Redis Cluster",
  () => {
    const local = localClusterForTests();

    it("a put that lands between the deletion of its blob and the cleanup of the claims keeps its `puts` entry", async () => {
      const collector = local.cluster().client();
      try {
        await checkPutBetweenDeletionAndCleanup(
          collector,
          local.client(),
          freshPrefix("cluster-claims-race"),
        );
      } finally {
        collector.disconnect();
      }
    });
  },
);
