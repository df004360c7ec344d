import type { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, it } from "vitest";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { RedisEventStore } from "./redis-store.js";
import {
  type LocalCluster,
  localClusterUnavailable,
  startLocalCluster,
} from "./testing/local-cluster.js";
import { freshPrefix } from "./testing/test-keys.js";

// A real Redis Cluster (three masters from the machine's redis-server): every key a store
// touches in one command, MULTI or script must share a slot, or the cluster refuses it.
const unavailable = await localClusterUnavailable();

describe.skipIf(unavailable !== undefined)("RedisEventStore on Redis Cluster", () => {
  let cluster: LocalCluster;
  let client: Cluster;
  beforeAll(async () => {
    cluster = await startLocalCluster();
    client = cluster.client();
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });

  runEventStoreConformance(
    () => new RedisEventStore({ client, keyPrefix: freshPrefix("cluster") }),
    { describe, it },
  );
});
