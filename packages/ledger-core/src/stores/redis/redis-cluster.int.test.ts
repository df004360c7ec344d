import { describe, it } from "vitest";
import { runEventStoreConformance } from "../../testing/conformance.js";
import { checkSharedBlobWriters } from "../sql/testing/shared-blob-writers.js";
import { RedisEventStore } from "./redis-store.js";
import { localClusterForTests } from "./testing/cluster-hooks.js";
import { localClusterUnavailable } from "./testing/local-cluster.js";
import { freshPrefix } from "./testing/test-keys.js";

// A real Redis Cluster (three masters from the machine's redis-server): every key a store
// touches in one command, MULTI or script must share a slot, or the cluster refuses it.
const unavailable = await localClusterUnavailable();

describe.skipIf(unavailable !== undefined)("RedisEventStore on Redis Cluster", () => {
  const local = localClusterForTests();
  runEventStoreConformance(
    () => new RedisEventStore({ client: local.client(), keyPrefix: freshPrefix("cluster") }),
    { describe, it },
  );

  it("two stores writing runs of four sessions, every append carrying blobs others carry too: each written once, every blob kept", async () => {
    // Here the blobs go on other nodes, put before each append's script.
    const keyPrefix = freshPrefix("cluster-shared");
    const stores = [1, 2].map(() => new RedisEventStore({ client: local.client(), keyPrefix }));
    await checkSharedBlobWriters(stores, "shared-blobs");
  });
});
