import type { Cluster } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { type LocalCluster, startLocalCluster } from "./local-cluster.js";

/**
 * A local Redis Cluster for the tests of the enclosing `describe`: started before them, its
 * client disconnected and its servers stopped after them. The getters are for use inside tests.
 * (Apart from local-cluster.ts, which the writer processes of the race test load without vitest.)
 */
export function localClusterForTests(): { cluster(): LocalCluster; client(): Cluster } {
  let cluster: LocalCluster | undefined;
  let client: Cluster | undefined;
  beforeAll(async () => {
    cluster = await startLocalCluster();
    client = cluster.client();
  }, 60_000);
  afterAll(async () => {
    client?.disconnect();
    await cluster?.stop();
  });
  return { cluster: () => cluster as LocalCluster, client: () => client as Cluster };
}
